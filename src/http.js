// The listeners' defences against slow, silent and too many clients (settings in config.js),
// shared by the service's listener and the METRICS_PORT one.

// How often, at most, Node looks for connections past their headers or receive timeout.
const MAX_CONNECTIONS_CHECK_MS = 1000

// Fastify options: Node answers 408 and closes a connection past its timeout, so a connection is
// closed within its timeout plus the check interval.
export function serverOptions ({ headersTimeoutMs, receiveTimeoutMs, keepAliveTimeoutMs }) {
  return {
    http: { headersTimeout: headersTimeoutMs, connectionsCheckingInterval: Math.min(MAX_CONNECTIONS_CHECK_MS, headersTimeoutMs) },
    requestTimeout: receiveTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs
  }
}

// Past the bound, Node closes a new connection as soon as it is accepted.
export function limitConnections (app, { maxConnections }) {
  app.server.maxConnections = maxConnections
}
