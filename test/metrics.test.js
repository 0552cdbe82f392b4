import { performance } from 'node:perf_hooks'
import Fastify from 'fastify'
// Fastify's deprecation warnings, each emitted once a process: reset here to see one again.
import { FSTDEP023 } from 'fastify/lib/warnings.js'
import { test } from 'tap'
import { loadConfig } from '../src/config.js'
import metrics from '../src/metrics.js'
import { build, SIZED_TEST_TASK, TEST_TASK, until, value } from './helper.js'
import { THROWS } from './fixtures/test-worker.js'

const scrape = async (app) => (await app.inject('/metrics')).body

test('/metrics serves the Prometheus text format with the pool\'s size, capacity and configuration', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2', POOL_MAX_QUEUE: '5', FIB_MAX_NUM: '40', REQUEST_TIMEOUT_MS: '1500', PRESSURE_MAX_RSS_BYTES: '123456789' })
  const res = await app.inject('/metrics')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], 'text/plain; version=0.0.4')
  t.equal(value(res.body, 'fib_pool_threads'), 2)
  t.equal(value(res.body, 'fib_pool_queue_capacity'), 5)
  t.ok(value(res.body, 'fib_pool_available_cpus') >= 1)
  t.equal(value(res.body, 'fib_pool_busy_threads'), 0)
  t.equal(value(res.body, 'fib_pool_queue_size'), 0)
  t.equal(value(res.body, 'fib_pressure_max_rss_bytes'), 123456789, 'the RSS bound in effect')
  t.equal(value(res.body, 'fib_pool_info', 'version="1.0.0",threads="2",threads_source="POOL_THREADS",max_queue="5",max_wait_seconds="1",deadline_factor="4",tasks_per_thread="2",express_max_seconds="0.003",thread_nice="0",fib_max_num="40",fib_inline_max_num="18",request_timeout_seconds="1.5"'), 1)
  const elu = value(res.body, 'nodejs_eventloop_utilization_ratio')
  t.ok(elu >= 0 && elu <= 1, `event-loop utilisation is a ratio (${elu})`)
  t.ok(value(res.body, 'nodejs_eventloop_lag_p99_seconds') >= 0, 'prom-client\'s default metrics are there')
  t.ok(value(res.body, 'process_resident_memory_bytes') > 0)
})

// Who opens and closes it (server.js, on SIGTERM) is tested in server.test.js.
test('with METRICS_PORT the same registry is served by a listener of its own', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', METRICS_PORT: '9464' })
  await app.inject('/fib?num=25')
  await app.metricsServer.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.metricsServer.close())
  const res = await fetch(`http://127.0.0.1:${app.metricsServer.server.address().port}/metrics`)
  t.equal(res.status, 200)
  t.equal(value(await res.text(), 'fib_pool_tasks_completed_total'), 1, 'the main app\'s counters')
})

test('the METRICS_PORT listener starts without a deprecation warning', async (t) => {
  const warnings = []
  const onWarning = (warning) => warnings.push(warning.code)
  process.on('warning', onWarning)
  t.teardown(() => process.removeListener('warning', onWarning))
  FSTDEP023.emitted = false
  const { app } = await build(t, { POOL_THREADS: '1', METRICS_PORT: '9464' })
  t.ok(app.metricsServer, 'the listener is there')
  // Warnings are emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve))
  t.same(warnings, [], 'no warning')
  t.equal(FSTDEP023.emitted, false, 'not disableRequestLogging (FSTDEP023)')
})

test('without METRICS_PORT there is no second listener', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  t.notOk(app.hasDecorator('metricsServer'))
})

test('7 tasks move the completed count and both task histograms by 7', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2' })
  const before = await scrape(app)
  await Promise.all(Array.from({ length: 7 }, () => app.inject('/fib?num=25')))
  const after = await scrape(app)
  for (const name of ['fib_pool_tasks_completed_total', 'fib_pool_task_run_seconds_count', 'fib_pool_task_wait_seconds_count']) {
    t.equal(value(after, name) - value(before, name), 7, name)
  }
  t.ok(value(after, 'fib_pool_task_run_seconds_sum') > 0)
  t.equal(value(after, 'http_request_duration_seconds_count', 'method="GET",route="/fib",status_code="200"'), 7, 'the route template, not the URL')
})

test('a num up to FIB_INLINE_MAX_NUM counts as inline, not as a pool task', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  await app.inject('/fib?num=18')
  await app.inject('/fib?num=19')
  const text = await scrape(app)
  t.equal(value(text, 'fib_inline_total'), 1)
  t.equal(value(text, 'fib_pool_tasks_completed_total'), 1)
})

test('a shed request counts as rejected{reason="queue_full"}, and busy threads and queue show the load', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_TASKS_PER_THREAD: '1', POOL_MAX_QUEUE: '1' }, { task: TEST_TASK })
  const admitted = [app.inject('/fib?num=30'), app.inject('/fib?num=30')]
  await until(() => app.pool.refusal() !== undefined)
  const loaded = await scrape(app)
  t.equal(value(loaded, 'fib_pool_busy_threads'), 1)
  t.equal(value(loaded, 'fib_pool_queue_size'), 1)
  t.equal(value(loaded, 'fib_requests_rejected_total', 'reason="queue_full"'), 0)
  t.equal((await app.inject('/fib?num=3')).statusCode, 503)
  t.equal(value(await scrape(app), 'fib_requests_rejected_total', 'reason="queue_full"'), 1)
  t.equal((await app.inject('/ready')).statusCode, 503)
  t.equal(value(await scrape(app), 'fib_requests_rejected_total', 'reason="queue_full"'), 1, 'a readiness probe is not a rejected request')
  await Promise.all(admitted)
})

test('the queue\'s predicted work and wait are exported in seconds', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_TASKS_PER_THREAD: '1' }, { task: SIZED_TEST_TASK })
  const tasks = [app.inject('/fib?num=20'), app.inject('/fib?num=30')]
  await until(() => app.pool.queued === 1)
  const text = await scrape(app)
  t.equal(value(text, 'fib_pool_queue_predicted_seconds'), 0.3)
  t.equal(value(text, 'fib_pool_predicted_wait_seconds'), 0.5, '300 ms queued and 200 ms on the one thread')
  await Promise.all(tasks)
})

test('the metrics plugin refuses to start without the pool it reads, with Fastify\'s own message', async (t) => {
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  app.register(metrics, { config: loadConfig({}), schema: {} })
  await t.rejects(app.ready(), { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED', message: "The dependency 'pool' of plugin 'metrics' is not registered" })
})

test('a deadline counts as aborted{reason="deadline"}, a throwing task as failed, and neither as rejected', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', REQUEST_TIMEOUT_MS: '100', FIB_MAX_NUM: '78' }, { task: TEST_TASK })
  t.equal((await app.inject(`/fib?num=${THROWS}`)).statusCode, 500)
  t.equal((await app.inject('/fib?num=50')).statusCode, 504)
  t.equal((await app.inject('/fib?num=x')).statusCode, 400)
  const text = await scrape(app)
  const rejected = text.split('\n').filter((line) => line.startsWith('fib_requests_rejected_total{'))
  t.same(rejected.map((line) => line.split(' ')[1]), rejected.map(() => '0'), 'rejected counts refusals before any work only')
  t.equal(value(text, 'fib_pool_tasks_aborted_total', 'reason="deadline"'), 1)
  t.equal(value(text, 'fib_pool_tasks_aborted_total', 'reason="client_gone"'), 0)
  t.equal(value(text, 'fib_pool_tasks_failed_total'), 1)
  t.equal(value(text, 'fib_pool_tasks_completed_total'), 0, 'the warm-up tasks are not counted')
})

test('pressure and shutdown count as rejected with their reasons; unknown routes share one label', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', PRESSURE_MAX_HEAP_BYTES: '1' })
  await until(async () => (await app.inject('/fib?num=3')).statusCode === 503)
  t.ok(value(await scrape(app), 'fib_requests_rejected_total', 'reason="under_pressure"') >= 1)
  t.equal((await app.inject('/metrics')).statusCode, 200, '/metrics is never shed')
  app.closing = true
  await app.inject('/fib?num=3')
  await app.inject('/no/such/route?x=1')
  const text = await scrape(app)
  t.equal(value(text, 'fib_requests_rejected_total', 'reason="shutting_down"'), 0, 'under pressure, the pressure check answers first')
  t.equal(value(text, 'http_request_duration_seconds_count', 'method="GET",route="unmatched",status_code="404"'), 1)
})

test('a fib request refused while shutting down counts as rejected{reason="shutting_down"}', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  app.closing = true
  await app.inject('/fib?num=3')
  t.equal(value(await scrape(app), 'fib_requests_rejected_total', 'reason="shutting_down"'), 1)
})

test('times are exported in seconds: a task\'s compute and wait, a request\'s duration', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', FIB_MAX_NUM: '78' }, { task: SIZED_TEST_TASK })
  const started = performance.now()
  // Two 50 ms tasks on one thread: the second waits for the first.
  const answers = await Promise.all([app.inject('/fib?num=5'), app.inject('/fib?num=5')])
  const wallSeconds = (performance.now() - started) / 1000
  t.same(answers.map((res) => res.json().computeMs), [50, 50])
  const text = await scrape(app)
  t.equal(value(text, 'fib_pool_task_run_seconds_sum'), 0.1)
  const waited = value(text, 'fib_pool_task_wait_seconds_sum')
  t.ok(waited >= 0.04 && waited < wallSeconds, `the second task waited about 0.05 s (${waited})`)
  const took = value(text, 'http_request_duration_seconds_sum', 'method="GET",route="/fib",status_code="200"')
  t.ok(took >= 0.1 && took < 2 * wallSeconds, `the requests took 0.05 and 0.1 s (${took})`)
})

test('the prediction ratio is measured over predicted compute, and not observed while nothing can be predicted', async (t) => {
  // The sized task is predicted exactly once calibrated: every ratio is 1.
  const sized = (await build(t, { POOL_THREADS: '1', FIB_MAX_NUM: '78' }, { task: SIZED_TEST_TASK })).app
  await sized.inject('/fib?num=5')
  await sized.inject('/fib?num=7')
  const text = await scrape(sized)
  t.equal(value(text, 'fib_pool_task_prediction_ratio_count'), 2)
  t.equal(value(text, 'fib_pool_task_prediction_ratio_sum'), 2)
  // The plain stand-in calibrates on a task that takes no time: nothing to predict from yet.
  const blind = (await build(t, { POOL_THREADS: '1', FIB_MAX_NUM: '78' }, { task: TEST_TASK })).app
  t.equal(blind.pool.predict({ num: 3 }), 0)
  t.equal((await blind.inject('/fib?num=3')).statusCode, 200)
  t.equal(value(await scrape(blind), 'fib_pool_task_prediction_ratio_count'), 0)
})

test('every metric has its help text, the labelled ones naming each reason they count, and every reason is there from the start, at 0', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  const lines = (await scrape(app)).split('\n')
  const families = lines.filter((line) => line.startsWith('# TYPE ')).map((line) => line.split(' ')[2])
  const helps = new Map(lines.filter((line) => line.startsWith('# HELP ')).map((line) => {
    const [, , name, ...text] = line.split(' ')
    return [name, text.join(' ').trim()]
  }))
  for (const name of families) t.ok(helps.get(name), `${name}: ${helps.get(name)}`)
  const text = lines.join('\n')
  for (const reason of ['queue_full', 'queue_wait', 'over_deadline', 'under_pressure', 'shutting_down']) {
    t.equal(value(text, 'fib_requests_rejected_total', `reason="${reason}"`), 0, reason)
    t.match(helps.get('fib_requests_rejected_total'), `"${reason}"`, `the help of fib_requests_rejected_total names ${reason}`)
  }
  for (const reason of ['deadline', 'client_gone']) {
    t.equal(value(text, 'fib_pool_tasks_aborted_total', `reason="${reason}"`), 0, reason)
    t.match(helps.get('fib_pool_tasks_aborted_total'), `"${reason}"`, `the help of fib_pool_tasks_aborted_total names ${reason}`)
  }
})

test('the histograms\' buckets: durations from half a millisecond to a minute, the prediction ratio from a quarter to four', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  await app.inject('/fib?num=25')
  const text = await scrape(app)
  const bounds = (name) => [...text.matchAll(new RegExp(`^${name}_bucket\\{.*?le="([^"]+)"`, 'gm'))].map((m) => m[1])
  const durations = ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '20', '30', '60', '+Inf']
  for (const name of ['fib_pool_task_run_seconds', 'fib_pool_task_wait_seconds']) t.same(bounds(name), durations, name)
  const http = bounds('http_request_duration_seconds')
  t.same(http.slice(0, durations.length), durations, 'http_request_duration_seconds, for each series')
  t.same(bounds('fib_pool_task_prediction_ratio'), ['0.25', '0.5', '0.8', '0.9', '1', '1.1', '1.25', '2', '4', '+Inf'])
})

test('the event-loop utilisation is the share of the time since the previous scrape', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  await scrape(app)
  const busyUntil = Date.now() + 300
  while (Date.now() < busyUntil);
  const busy = value(await scrape(app), 'nodejs_eventloop_utilization_ratio')
  t.ok(busy > 0.5, `after 300 ms of blocking work: ${busy}`)
  await new Promise((resolve) => setTimeout(resolve, 600))
  const idle = value(await scrape(app), 'nodejs_eventloop_utilization_ratio')
  t.ok(idle < 0.3, `after 600 ms of waiting: ${idle}`)
})

test('the METRICS_PORT listener has the service\'s connection limits, and writes no request lines', async (t) => {
  const env = { POOL_THREADS: '1', METRICS_PORT: '9464', HTTP_MAX_CONNECTIONS: '7', HTTP_HEADERS_TIMEOUT_MS: '200', HTTP_RECEIVE_TIMEOUT_MS: '400' }
  const { app, logs } = await build(t, env)
  await app.metricsServer.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.metricsServer.close())
  const { server } = app.metricsServer
  t.match(server, { maxConnections: 7, headersTimeout: 200, requestTimeout: 400, connectionsCheckingInterval: 200 })
  // Scrapes arrive every few seconds for the life of the service: no line each.
  const before = logs.length
  t.equal((await app.metricsServer.inject('/metrics')).statusCode, 200)
  t.equal((await app.metricsServer.inject('/nowhere')).statusCode, 404)
  t.same(logs.slice(before), [], 'no log line')
})
