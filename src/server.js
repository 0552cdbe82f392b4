// Entry point: the one place that reads the environment, listens, and wires graceful shutdown.
// First, before any other module runs: see tick-shape.js.
import './tick-shape.js'
import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { build } from './app.js'
import { loadConfig } from './config.js'

let config
try {
  config = loadConfig(process.env)
} catch (err) {
  // A ConfigError: one plain line naming the setting, since an operator's typo is not a crash.
  process.stderr.write(`fib-pool: ${err.message}\n`)
  process.exit(1)
}

// JSON lines for machines; pretty lines only when a person watches a terminal.
const logger = {
  level: config.logLevel,
  ...(process.stdout.isTTY
    ? { transport: { target: 'pino-pretty' } }
    // Written before the call returns, so a line logged just before the process exits (a port
    // already taken, 'shut down cleanly', a grace timeout) is never lost.
    : { stream: pino.destination({ dest: 1, sync: true }) })
}
const app = await build(config, { logger })

// SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the pool, exit 0.
// A second signal, or the grace delay running out, ends the process at once.
closeWithGrace({ delay: config.shutdownGraceMs, logger: app.log }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an uncaught error')
  else app.log.info({ signal }, 'shutting down: draining in-flight requests')
  await app.close()
  // The metrics listener closes last, so that the drain can be watched until it ends.
  await app.metricsServer?.close()
  app.log.info('shut down cleanly')
})

async function listen (server, port) {
  try {
    await server.listen({ port, host: config.host })
  } catch (err) {
    app.log.fatal({ err }, `cannot listen on ${config.host}:${port}`)
    process.exit(1)
  }
}
await listen(app, config.port)
if (app.metricsServer) await listen(app.metricsServer, config.metricsPort)
app.log.info({
  threads: config.poolThreads,
  threadsFrom: config.poolThreadsSource,
  availableCpus: config.availableCpus,
  metricsPort: config.metricsPort,
  maxQueue: config.poolMaxQueue,
  maxWaitMs: config.poolMaxWaitMs,
  deadlineFactor: config.poolDeadlineFactor,
  tasksPerThread: config.poolTasksPerThread,
  expressMaxMs: config.poolExpressMaxMs,
  threadNice: config.poolThreadNice,
  maxRssBytes: config.pressure.maxRssBytes,
  maxRssBytesFrom: config.pressure.maxRssBytesSource,
  fibMaxNum: config.fibMaxNum,
  requestTimeoutMs: config.requestTimeoutMs,
  shutdownGraceMs: config.shutdownGraceMs
}, 'pool ready')
