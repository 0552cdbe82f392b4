import { test } from 'tap'
import { build, TEST_WORKER, until } from '../helper.js'

test('/health answers 200 while every thread is busy and the queue is full', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_MAX_QUEUE: '0' }, { workerFile: TEST_WORKER })
  const busy = app.inject('/fib?num=30')
  await until(() => app.pool.full)
  const res = await app.inject('/health')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
  t.equal((await busy).statusCode, 200)
})

test('/ready answers 200 when a request can be taken, 503 while the queue is full', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_MAX_QUEUE: '0' }, { workerFile: TEST_WORKER })
  t.same((await app.inject('/ready')).json(), { status: 'ready' })
  const busy = app.inject('/fib?num=30')
  await until(() => app.pool.full)
  const res = await app.inject('/ready')
  t.equal(res.statusCode, 503)
  t.match(res.json(), { statusCode: 503, code: 'QUEUE_FULL' })
  t.ok(Number(res.headers['retry-after']) >= 1)
  await busy
  t.equal((await app.inject('/ready')).statusCode, 200, 'ready again once the work is done')
})

test('/ready answers 503 SHUTTING_DOWN once closing has begun, /health stays 200', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  app.closing = true
  const res = await app.inject('/ready')
  t.equal(res.statusCode, 503)
  t.equal(res.json().code, 'SHUTTING_DOWN')
  t.equal((await app.inject('/health')).statusCode, 200)
})
