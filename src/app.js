// Builds the service as a Fastify app from a config object; nothing listens here.
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import drain, { refuseWhileClosing } from './drain.js'
import errors, { frameworkError } from './errors.js'
import { limitConnections, serverOptions } from './http.js'
import { dereference, readSpec, routeSchema } from './openapi.js'
import metrics from './metrics.js'
import pool from './pool/index.js'
import pressure from './pressure.js'
import { RequestLog } from './request-log.js'
import fibRoute from './routes/fib.js'
import healthRoute from './routes/health.js'
import readyRoute from './routes/ready.js'

// A client's x-request-id is kept when it is a sane token, so it cannot bloat or garble the logs.
const USABLE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/

export function requestId (req) {
  const id = req.headers['x-request-id']
  return typeof id === 'string' && USABLE_REQUEST_ID.test(id) ? id : randomUUID()
}

// Callback-style hooks on the hot path: no promise per request (docs/benchmarks.md, "Questions answered").
export function echoRequestId (request, reply, done) {
  reply.header('x-request-id', request.id)
  done()
}

// The pool's settings, from the service's.
export const poolOptions = (config) => ({
  threads: config.poolThreads,
  maxQueue: config.poolMaxQueue,
  maxWaitMs: config.poolMaxWaitMs,
  deadlineFactor: config.poolDeadlineFactor,
  tasksPerThread: config.poolTasksPerThread,
  expressMaxMs: config.poolExpressMaxMs,
  nice: config.poolThreadNice,
  timeoutMs: config.requestTimeoutMs
})

// `logger` is Fastify's logger option (pino options or false); `task` swaps the task in tests
// (its worker file, the size of an input, a calibration input: see FIB_TASK in pool/index.js,
// the pool's default); `execArgv`, the worker threads' node options, inherited unless given;
// `cancelGraceMs`, how long a cheap task whose client has gone runs on (CANCEL_GRACE_MS unless given).
export async function build (config, { logger = { level: config.logLevel }, task, execArgv, cancelGraceMs } = {}) {
  const app = Fastify({
    // No line carries request headers: the request log picks its fields (request-log.js).
    logger,
    genReqId: requestId,
    frameworkErrors: frameworkError,
    ...serverOptions(config.http),
    logController: new RequestLog({ all: config.logRequests === 'all' }),
    // Closing is answered by the routes themselves, in the service's own error shape.
    return503OnClosing: false
  })

  limitConnections(app, config.http)

  const spec = readSpec({ fibMaxNum: config.fibMaxNum })
  const resolved = dereference(spec)

  app.addHook('onRequest', echoRequestId)

  await app.register(errors)
  await app.register(drain)
  await app.register(pool, { ...poolOptions(config), task, execArgv, cancelGraceMs })
  await app.register(metrics, { config, schema: routeSchema(resolved, 'GET', '/metrics') })
  await app.register(swagger, { mode: 'static', specification: { document: spec } })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  await app.register(healthRoute, { schema: routeSchema(resolved, 'GET', '/health') })
  // The work routes, and readiness, are shed under main-thread pressure and while closing;
  // liveness is not.
  await app.register(async function work (scope) {
    await scope.register(pressure, config.pressure)
    scope.addHook('onRequest', refuseWhileClosing)
    await scope.register(fibRoute, { schema: routeSchema(resolved, 'GET', '/fib'), maxNum: config.fibMaxNum, inlineMaxNum: config.fibInlineMaxNum })
    await scope.register(readyRoute, { schema: routeSchema(resolved, 'GET', '/ready') })
  })
  return app
}
