// Graceful drain: once closing starts, in-flight requests finish and every connection ends promptly.
import fp from 'fastify-plugin'
import { ShuttingDown } from './errors.js'

// An onRequest hook for the routes that take new work: once closing starts, a request on a
// connection still open is answered 503 SHUTTING_DOWN. Liveness and metrics do not add it.
export function refuseWhileClosing (request, reply, done) {
  done(this.closing ? new ShuttingDown() : undefined)
}

// The connections of `server` that have sent no request yet (clients and proxies pre-connect),
// kept up to date: one that sends a request, or closes, leaves the set.
export function unusedConnections (server) {
  const unused = new Set()
  server.on('connection', (socket) => {
    unused.add(socket)
    socket.once('close', () => unused.delete(socket))
  })
  server.on('request', (req) => unused.delete(req.socket))
  return unused
}

async function drain (app) {
  app.decorate('closing', false)

  // Node's server.close() ends idle keep-alive connections, but not two other kinds,
  // either of which would hold shutdown open until the grace delay runs out:
  // connections opened and never used, and
  // connections busy when closing starts (kept alive after their response).
  const unused = unusedConnections(app.server)

  app.addHook('preClose', async () => {
    app.closing = true
    for (const socket of unused) socket.destroy()
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (app.closing) reply.header('connection', 'close')
    done()
  })
}

export default fp(drain, { name: 'drain' })
