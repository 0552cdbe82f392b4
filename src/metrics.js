// Prometheus metrics (prom-client): every metric the service exposes is named here, served at GET /metrics.
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import Fastify, { LogController } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import errors from './errors.js'
import { Histogram } from './histogram.js'
import { limitConnections, serverOptions } from './http.js'
import { POLLED } from './request-log.js'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

// Seconds, from a fraction of a millisecond (fib(10), a 503) to past the longest sensible task
// (fib(45) is about 15 s on one core) and the default 30 s deadline.
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60]
// Measured over predicted compute: a model within 10% puts most tasks in the two middle buckets.
export const PREDICTION_BUCKETS = [0.25, 0.5, 0.8, 0.9, 1, 1.1, 1.25, 2, 4]
const ABORT_REASONS = ['deadline', 'client_gone']
const REJECT_REASONS = ['queue_full', 'queue_wait', 'over_deadline', 'under_pressure', 'shutting_down']

async function metrics (app, { config, schema }) {
  const registry = new Registry()
  const registers = [registry]
  collectDefaultMetrics({ register: registry })

  let lastElu = performance.eventLoopUtilization()
  // eslint-disable-next-line no-new -- registered in `registry`, read at scrape time
  new Gauge({
    name: 'nodejs_eventloop_utilization_ratio',
    help: 'Share of the time since the previous scrape that the main thread\'s event loop was busy.',
    registers,
    collect () {
      const now = performance.eventLoopUtilization()
      this.set(performance.eventLoopUtilization(now, lastElu).utilization)
      lastElu = now
    }
  })

  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: DURATION_BUCKETS,
    registers
  })
  app.addHook('onResponse', (request, reply, done) => {
    // The route template, never the raw URL: unknown paths share one label value.
    httpDuration.labels(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode).observe(reply.elapsedTime / 1000)
    done()
  })

  // The pool in the USE spirit: how big, how busy, how queued; read at scrape time.
  const { pool } = app
  const poolGauge = (name, help, read) => new Gauge({ name, help, registers, collect () { this.set(read()) } })
  poolGauge('fib_pool_threads', 'Worker threads in the pool (POOL_THREADS), the express thread not counted.', () => pool.threads)
  new Gauge({ name: 'fib_pool_available_cpus', help: 'CPUs this process may use: affinity capped by the cgroup CPU quota.', registers })
    .set(config.availableCpus)
  new Gauge({ name: 'fib_pressure_max_rss_bytes', help: 'Resident memory past which work is shed with 503 (PRESSURE_MAX_RSS_BYTES, or a share of the cgroup memory limit); 0: off.', registers })
    .set(config.pressure.maxRssBytes)
  poolGauge('fib_pool_busy_threads', 'Worker threads running a task now.', () => pool.busy)
  poolGauge('fib_pool_queue_size', 'Tasks admitted and waiting for a thread.', () => pool.queued)
  poolGauge('fib_pool_queue_capacity', 'Tasks that may wait for a thread (POOL_MAX_QUEUE); beyond it requests get 503.', () => pool.maxQueue)
  poolGauge('fib_pool_queue_predicted_seconds', 'Predicted compute of the tasks in the queue, in seconds of one thread.', () => pool.queuedWorkMs / 1000)
  poolGauge('fib_pool_wait_error_ratio', 'What the cost model\'s predicted waits are multiplied by: how much longer the long waits have run lately (their 99th percentile against the prediction), at least 1.', () => pool.waitErrorFactor)
  poolGauge('fib_pool_predicted_wait_seconds', 'Predicted wait for a thread: the queued work and the work on the threads, divided by the threads, times fib_pool_wait_error_ratio. Over POOL_MAX_WAIT_MS, /ready answers 503.', () => pool.predictedWaitMs / 1000)
  const info = new Gauge({
    name: 'fib_pool_info',
    help: 'The service version and pool configuration, as labels; always 1.',
    labelNames: ['version', 'threads', 'threads_source', 'max_queue', 'max_wait_seconds', 'deadline_factor', 'tasks_per_thread', 'express_max_seconds', 'thread_nice', 'fib_max_num', 'fib_inline_max_num', 'request_timeout_seconds'],
    registers
  })
  info.set({
    version,
    threads: config.poolThreads,
    threads_source: config.poolThreadsSource,
    max_queue: config.poolMaxQueue,
    max_wait_seconds: config.poolMaxWaitMs / 1000,
    deadline_factor: config.poolDeadlineFactor,
    tasks_per_thread: config.poolTasksPerThread,
    express_max_seconds: config.poolExpressMaxMs / 1000,
    thread_nice: config.poolThreadNice,
    fib_max_num: config.fibMaxNum,
    fib_inline_max_num: config.fibInlineMaxNum,
    request_timeout_seconds: config.requestTimeoutMs / 1000
  }, 1)

  const taskWait = new Histogram({
    name: 'fib_pool_task_wait_seconds',
    help: 'Time a completed task waited between admission and its thread starting it (queue and hand-off).',
    buckets: DURATION_BUCKETS,
    registers
  })
  const taskRun = new Histogram({
    name: 'fib_pool_task_run_seconds',
    help: 'Time a completed task computed on its thread.',
    buckets: DURATION_BUCKETS,
    registers
  })
  const predictionRatio = new Histogram({
    name: 'fib_pool_task_prediction_ratio',
    help: 'Measured compute time of a completed task over the cost model\'s prediction at admission (1 = exact).',
    buckets: PREDICTION_BUCKETS,
    registers
  })
  const completed = new Counter({ name: 'fib_pool_tasks_completed_total', help: 'Tasks that completed with a result.', registers })
  const failed = new Counter({ name: 'fib_pool_tasks_failed_total', help: 'Tasks that threw or whose thread died.', registers })
  const retried = new Counter({
    name: 'fib_pool_tasks_retried_total',
    help: 'Tasks handed to a thread again because the thread they waited on was terminated to cancel the task it ran.',
    registers
  })
  const aborted = new Counter({
    name: 'fib_pool_tasks_aborted_total',
    help: 'Tasks cancelled before their result: reason="deadline" (REQUEST_TIMEOUT_MS) or "client_gone".',
    labelNames: ['reason'],
    registers
  })
  // Every reason is exported from the start, at 0, so rate() sees the first increment.
  const abortedBy = Object.fromEntries(ABORT_REASONS.map((reason) => [reason, aborted.labels(reason)]))
  for (const child of Object.values(abortedBy)) child.inc(0)

  // The pool says what happened to each task; these series count it.
  pool.events.on('completed', ({ computeMs, waitMs, predictedMs }) => {
    completed.inc()
    taskRun.observe(computeMs / 1000)
    taskWait.observe(waitMs / 1000)
    if (predictedMs > 0) predictionRatio.observe(computeMs / predictedMs)
  })
  pool.events.on('aborted', (reason) => abortedBy[reason].inc())
  pool.events.on('failed', () => failed.inc())
  pool.events.on('retried', () => retried.inc())

  const instruments = {
    inline: new Counter({ name: 'fib_inline_total', help: 'fib requests computed on the main thread (num <= FIB_INLINE_MAX_NUM).', registers }),
    rejected: new Counter({
      name: 'fib_requests_rejected_total',
      help: 'fib requests refused before any work: reason="queue_full" (POOL_MAX_QUEUE), "queue_wait" (POOL_MAX_WAIT_MS), ' +
        '"over_deadline" (predicted compute past REQUEST_TIMEOUT_MS, 422), "under_pressure" or "shutting_down" (503).',
      labelNames: ['reason'],
      registers
    })
  }
  for (const reason of REJECT_REASONS) instruments.rejected.labels(reason).inc(0)
  app.decorate('metrics', instruments)

  async function exposition (request, reply) {
    reply.type(registry.contentType)
    return registry.metrics()
  }
  app.get('/metrics', { schema, config: POLLED }, exposition)

  // With METRICS_PORT, the same exposition also on a listener of its own (e.g. one that only
  // Prometheus can reach). server.js opens and closes it, beside the main listener.
  if (config.metricsPort !== undefined) {
    // The service's logger, for its errors; no line per scrape, which would bury the others.
    const exposer = Fastify({ loggerInstance: app.log, logController: new LogController({ disableRequestLogging: true }), ...serverOptions(config.http) })
    limitConnections(exposer, config.http)
    await exposer.register(errors)
    exposer.get('/metrics', exposition)
    app.decorate('metricsServer', exposer)
  }
}

// The pool comes first: the metrics read its state and subscribe to its events.
export default fp(metrics, { name: 'metrics', dependencies: ['pool'] })
