// The service's errors, declared once, and one shape for every route and status:
// { statusCode, error, code, message, requestId }.
import { STATUS_CODES } from 'node:http'
import createError from '@fastify/error'
import fp from 'fastify-plugin'

// Errors meant for the client as they are: status, code, message (util.format of the arguments).
// `retryAfter` (seconds) becomes a Retry-After header; `reason` marks a request refused before
// any work, for fib_requests_rejected_total. Declared on the prototype, or set where known.
class ServiceError extends Error {}

// No stack trace: these are answers, not bugs, and a flood of refusals need not pay for one each.
function declare (code, statusCode, message, fields = {}) {
  const ErrorType = createError(code, message, statusCode, ServiceError, false)
  Object.assign(ErrorType.prototype, fields)
  return ErrorType
}

export const FibNumInvalid = declare('FIB_NUM_INVALID', 400, '%s')
export const OverDeadline = declare('OVER_DEADLINE', 422,
  'The task is predicted to compute for about %s, past the %d ms deadline (REQUEST_TIMEOUT_MS); ask for less work',
  { reason: 'over_deadline' })
// One code for the client, two causes, told apart by the metric's reason.
export const QueueFull = declare('QUEUE_FULL', 503,
  'All %d threads are busy and %d tasks are queued (POOL_MAX_QUEUE); retry later',
  { reason: 'queue_full' })
export const QueueWait = declare('QUEUE_FULL', 503,
  'All %d threads are busy and the work queued ahead would make this task wait about %s, over %s (POOL_MAX_WAIT_MS) or past its deadline; retry later',
  { reason: 'queue_wait' })
export const UnderPressure = declare('UNDER_PRESSURE', 503, 'The service is overloaded (%s); retry later', { reason: 'under_pressure' })
export const ShuttingDown = declare('SHUTTING_DOWN', 503, 'The service is shutting down; retry on another instance',
  { retryAfter: 1, reason: 'shutting_down' })
export const DeadlineExceeded = declare('DEADLINE_EXCEEDED', 504, 'The task did not finish within %d ms and was cancelled')

// Codes for the client errors Fastify raises itself (content-type parser, body limit) on a route
// that takes a body, by status; any other is BAD_REQUEST. None of the service's routes takes one:
// kept for the day one does.
const CLIENT_ERROR_CODES = { 413: 'BODY_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' }

export function errorBody (statusCode, code, message, requestId) {
  return { statusCode, error: STATUS_CODES[statusCode], code, message, requestId }
}

// Fastify's option for errors raised before routing (a URL it cannot decode): same shape.
export function frameworkError (err, request, reply) {
  reply.header('x-request-id', request.id)
  return reply.code(400).send(errorBody(400, 'BAD_REQUEST', err.message, request.id))
}

async function errors (app) {
  // A path that exists with other methods is 405 with Allow (RFC 9110, 15.5.6); any other, 404.
  function notFound (request, reply) {
    const path = request.url.split('?', 1)[0]
    // Every method Fastify serves, those without a body (GET, HEAD) first.
    const allowed = app.supportedMethods.filter((method) => app.hasRoute({ method, url: path }))
    if (allowed.length > 0) {
      const message = `${request.method} is not allowed on ${path}: use ${allowed.join(' or ')}`
      return reply.code(405).header('allow', allowed.join(', ')).send(errorBody(405, 'METHOD_NOT_ALLOWED', message, request.id))
    }
    return reply.code(404).send(errorBody(404, 'NOT_FOUND', `No route for ${request.method} ${path}`, request.id))
  }

  app.setErrorHandler(function handleError (err, request, reply) {
    // A request no route serves is answered 404 or 405 whatever Fastify found wrong with its body
    // or headers on the way (QUERY without a Content-Type, a body it cannot parse): the method
    // and path decide before the content does.
    if (request.is404 && err.statusCode < 500) return notFound(request, reply)
    if (err instanceof ServiceError) {
      if (err.retryAfter !== undefined) reply.header('retry-after', err.retryAfter)
      return reply.code(err.statusCode).send(errorBody(err.statusCode, err.code, err.message, request.id))
    }
    // A client's mistake that Fastify caught (a body it cannot parse, too large, of an unknown
    // type) stays a 4xx: nothing for the on-call engineer, so logged at info.
    if (err.statusCode >= 400 && err.statusCode < 500) {
      request.log.info({ err: { code: err.code, message: err.message } }, 'client error')
      const code = CLIENT_ERROR_CODES[err.statusCode] ?? 'BAD_REQUEST'
      return reply.code(err.statusCode).send(errorBody(err.statusCode, code, err.message, request.id))
    }
    // Anything else is ours to fix: logged in full, answered without internals.
    request.log.error({ err }, 'request failed')
    const message = `The request failed; it was logged with request id ${request.id}`
    return reply.code(500).send(errorBody(500, 'INTERNAL_ERROR', message, request.id))
  })

  app.setNotFoundHandler(notFound)
}

export default fp(errors, { name: 'errors' })
