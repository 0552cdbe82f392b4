import Fastify from 'fastify'
import { test } from 'tap'
import { loadConfig } from '../src/config.js'
import metrics from '../src/metrics.js'
import { build, SIZED_TEST_TASK, TEST_TASK, until, value } from './helper.js'
import { THROWS } from './fixtures/test-worker.js'

const scrape = async (app) => (await app.inject('/metrics')).body

test('/metrics serves the Prometheus text format with the pool\'s size, capacity and configuration', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2', POOL_MAX_QUEUE: '5', FIB_MAX_NUM: '40', REQUEST_TIMEOUT_MS: '1500' })
  const res = await app.inject('/metrics')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], 'text/plain; version=0.0.4')
  t.equal(value(res.body, 'fib_pool_threads'), 2)
  t.equal(value(res.body, 'fib_pool_queue_capacity'), 5)
  t.ok(value(res.body, 'fib_pool_available_cpus') >= 1)
  t.equal(value(res.body, 'fib_pool_busy_threads'), 0)
  t.equal(value(res.body, 'fib_pool_queue_size'), 0)
  t.equal(value(res.body, 'fib_pool_info', 'version="1.0.0",threads="2",threads_source="POOL_THREADS",max_queue="5",max_wait_seconds="1",tasks_per_thread="1",thread_nice="0",fib_max_num="40",fib_inline_max_num="18",request_timeout_seconds="1.5"'), 1)
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
