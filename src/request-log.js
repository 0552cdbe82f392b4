// The request log: one line per request, when its response is done, with what matters here.
import { LogController } from 'fastify'

// A URL is logged up to this length: a client must not be able to write 16 kB lines at will.
export const MAX_LOGGED_URL = 256
const loggedUrl = (url) => (url.length > MAX_LOGGED_URL ? `${url.slice(0, MAX_LOGGED_URL)}... (${url.length} characters)` : url)

// Polls (Docker's and Kubernetes' probes, Prometheus' scrapes) arrive every few seconds for the
// life of the service. At info they would bury the lines that matter; a failing one is seen by its
// poller (unhealthy, not ready, `up` 0), and its cause in the log lines of the requests that failed.
// `all` false (LOG_REQUESTS=failed): only requests answered 400 or more get a line, so a service
// answering every request costs no line at all.
export class RequestLog extends LogController {
  constructor ({ all }) {
    super()
    this.all = all
  }

  incomingRequest () {}

  requestCompleted (err, request, reply) {
    if (!this.all && reply.statusCode < 400) return
    // At LOG_LEVEL=warn or error the line is not even built, nor its level chosen (docs/benchmarks.md,
    // "Each feature's cost"): no request line is above info.
    if (!request.log.isLevelEnabled('info')) return
    const level = request.routeOptions.config.polled ? 'debug' : 'info'
    if (!request.log.isLevelEnabled(level)) return
    const { num } = request.query
    request.log[level]({
      method: request.method,
      url: loggedUrl(request.url),
      num: typeof num === 'number' ? num : undefined,
      statusCode: reply.statusCode,
      durationMs: reply.elapsedTime,
      err
    }, 'request completed')
  }
}

// The route config of a polled route: its request lines are logged at debug.
export const POLLED = Object.freeze({ polled: true })
