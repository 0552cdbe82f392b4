// Prometheus metrics (prom-client): every metric the service exposes is named here, served at GET /metrics.
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import Fastify from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import errors from './errors.js'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

// Seconds, from a fraction of a millisecond (fib(10), a 503) to past the longest sensible task
// (fib(45) is about 15 s on one core) and the default 30 s deadline.
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60]

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
  // One child per label set, kept: labelling costs a sort and a hash on every observe otherwise.
  const series = new Map()
  app.addHook('onResponse', (request, reply, done) => {
    // The route template, never the raw URL: unknown paths share one label value.
    const route = request.routeOptions.url ?? 'unmatched'
    const key = `${request.method} ${route} ${reply.statusCode}`
    let child = series.get(key)
    if (child === undefined) {
      child = httpDuration.labels(request.method, route, String(reply.statusCode))
      series.set(key, child)
    }
    child.observe(reply.elapsedTime / 1000)
    done()
  })

  // The pool in the USE spirit: how big, how busy, how queued; read at scrape time.
  const poolGauge = (name, help, read) => new Gauge({ name, help, registers, collect () { this.set(read(app.pool)) } })
  poolGauge('fib_pool_threads', 'Worker threads in the pool.', (pool) => pool.threads)
  new Gauge({ name: 'fib_pool_available_cpus', help: 'CPUs this process may use: affinity capped by the cgroup CPU quota.', registers })
    .set(config.availableCpus)
  poolGauge('fib_pool_busy_threads', 'Worker threads running a task now.', (pool) => pool.busy)
  poolGauge('fib_pool_queue_size', 'Tasks admitted and waiting for a thread.', (pool) => pool.queued)
  poolGauge('fib_pool_queue_capacity', 'Tasks that may wait for a thread (POOL_MAX_QUEUE); beyond it requests get 503.', (pool) => pool.maxQueue)
  const info = new Gauge({
    name: 'fib_pool_info',
    help: 'The service version and pool configuration, as labels; always 1.',
    labelNames: ['version', 'threads', 'threads_source', 'max_queue', 'tasks_per_thread', 'thread_nice', 'fib_max_num', 'fib_inline_max_num', 'request_timeout_seconds'],
    registers
  })
  info.set({
    version,
    threads: config.poolThreads,
    threads_source: config.poolThreadsSource,
    max_queue: config.poolMaxQueue,
    tasks_per_thread: config.poolTasksPerThread,
    thread_nice: config.poolThreadNice,
    fib_max_num: config.fibMaxNum,
    fib_inline_max_num: config.fibInlineMaxNum,
    request_timeout_seconds: config.requestTimeoutMs / 1000
  }, 1)

  const instruments = {
    taskWait: new Histogram({
      name: 'fib_pool_task_wait_seconds',
      help: 'Time a completed task waited between admission and its thread starting it (queue and hand-off).',
      buckets: DURATION_BUCKETS,
      registers
    }),
    taskRun: new Histogram({
      name: 'fib_pool_task_run_seconds',
      help: 'Time a completed task computed on its thread.',
      buckets: DURATION_BUCKETS,
      registers
    }),
    completed: new Counter({ name: 'fib_pool_tasks_completed_total', help: 'Tasks that completed with a result.', registers }),
    inline: new Counter({ name: 'fib_inline_total', help: 'fib requests computed on the main thread (num <= FIB_INLINE_MAX_NUM).', registers }),
    failed: new Counter({ name: 'fib_pool_tasks_failed_total', help: 'Tasks that threw or whose thread died.', registers }),
    retried: new Counter({
      name: 'fib_pool_tasks_retried_total',
      help: 'Tasks run again from the start because the thread they shared with an aborted task was terminated.',
      registers
    }),
    aborted: new Counter({
      name: 'fib_pool_tasks_aborted_total',
      help: 'Tasks cancelled before their result: reason="deadline" (REQUEST_TIMEOUT_MS) or "client_gone".',
      labelNames: ['reason'],
      registers
    }),
    rejected: new Counter({
      name: 'fib_requests_rejected_total',
      help: 'fib requests refused with 503 before any work: reason="queue_full", "under_pressure" or "shutting_down".',
      labelNames: ['reason'],
      registers
    })
  }
  // Every reason is exported from the start, at 0, so rate() sees the first increment.
  for (const reason of ['deadline', 'client_gone']) instruments.aborted.labels(reason).inc(0)
  for (const reason of ['queue_full', 'under_pressure', 'shutting_down']) instruments.rejected.labels(reason).inc(0)
  app.decorate('metrics', instruments)

  async function exposition (request, reply) {
    reply.type(registry.contentType)
    return registry.metrics()
  }
  app.get('/metrics', { schema }, exposition)

  // With METRICS_PORT, the same exposition also on a listener of its own (e.g. one that only
  // Prometheus can reach); server.js listens on it, the app closes it.
  if (config.metricsPort !== undefined) {
    const exposer = Fastify({ logger: false })
    await exposer.register(errors)
    exposer.get('/metrics', { schema }, exposition)
    app.decorate('metricsServer', exposer)
    app.addHook('onClose', () => exposer.close())
  }
}

export default fp(metrics, { name: 'metrics' })
