import { test } from 'tap'
import { build, SIZED_TEST_TASK, TEST_TASK, until } from '../helper.js'

test('/health answers 200 while every thread is busy and the queue is full', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_TASKS_PER_THREAD: '1', POOL_MAX_QUEUE: '0' }, { task: TEST_TASK })
  const busy = app.inject('/fib?num=30')
  await until(() => app.pool.refusal() !== undefined)
  const res = await app.inject('/health')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
  t.equal((await busy).statusCode, 200)
})

test('/ready answers 200 when a request can be taken, 503 while the queue is full', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_TASKS_PER_THREAD: '1', POOL_MAX_QUEUE: '0' }, { task: TEST_TASK })
  t.same((await app.inject('/ready')).json(), { status: 'ready' })
  const busy = app.inject('/fib?num=30')
  await until(() => app.pool.refusal() !== undefined)
  const res = await app.inject('/ready')
  t.equal(res.statusCode, 503)
  t.match(res.json(), { statusCode: 503, code: 'QUEUE_FULL' })
  t.ok(Number(res.headers['retry-after']) >= 1)
  await busy
  t.equal((await app.inject('/ready')).statusCode, 200, 'ready again once the work is done')
})

test('/ready answers 503 while the predicted wait is over POOL_MAX_WAIT_MS, 200 up to it', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_TASKS_PER_THREAD: '1', POOL_MAX_WAIT_MS: '250' }, { task: SIZED_TEST_TASK })
  const tasks = [app.inject('/fib?num=10'), app.inject('/fib?num=9'), app.inject('/fib?num=3')]
  await until(() => app.pool.queued === 2)
  t.equal((await app.inject('/ready')).statusCode, 200, '100 ms on the thread and 120 ms queued: within the bound')
  tasks.push(app.inject('/fib?num=3'))
  await until(() => app.pool.queued === 3)
  t.equal((await app.inject('/ready')).statusCode, 200, '250 ms: at the bound')
  tasks.push(app.inject('/fib?num=4'))
  await until(() => app.pool.queued === 4)
  const res = await app.inject('/ready')
  t.equal(res.statusCode, 503, '290 ms on one thread')
  t.match(res.json(), { code: 'QUEUE_FULL', message: /wait about 0\.29 s, over 0\.25 s \(POOL_MAX_WAIT_MS\)/ })
  t.equal(res.headers['retry-after'], '1')
  await Promise.all(tasks)
})

test('/ready answers 503 SHUTTING_DOWN once closing has begun, /health stays 200', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  app.closing = true
  const res = await app.inject('/ready')
  t.equal(res.statusCode, 503)
  t.equal(res.json().code, 'SHUTTING_DOWN')
  t.equal((await app.inject('/health')).statusCode, 200)
})
