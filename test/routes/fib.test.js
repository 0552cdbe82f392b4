import { test } from 'tap'
import { build, SIZED_TEST_TASK, TEST_TASK, until, value } from '../helper.js'
import { EXITS, THROWS } from '../fixtures/test-worker.js'

test('num=42 answers 200 with fib(42), the thread and the compute time', async (t) => {
  // About 3 s of CPU; a deadline far past the default 30 s, for a machine busy with other tests.
  const { app } = await build(t, { REQUEST_TIMEOUT_MS: '300000' })
  const res = await app.inject('/fib?num=42')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], 'application/json')
  t.match(res.json(), { num: 42, result: 267914296, threadId: Number, computeMs: Number })
  t.not(res.json().threadId, 0, 'computed on a worker thread, not the main one')
})

test('the largest num allowed by FIB_MAX_NUM is computed exactly', async (t) => {
  const { app } = await build(t, { FIB_MAX_NUM: '32' })
  t.equal((await app.inject('/fib?num=32')).json().result, 2178309)
  const res = await app.inject('/fib?num=33')
  t.equal(res.statusCode, 400)
  t.equal(res.json().message, 'num must be at most 32, got 33')
})

test('a num up to FIB_INLINE_MAX_NUM (18) is computed on the main thread, above it on the pool', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  t.match((await app.inject('/fib?num=18')).json(), { num: 18, result: 2584, threadId: 0 })
  t.not((await app.inject('/fib?num=19')).json().threadId, 0)
})

test('FIB_INLINE_MAX_NUM=0 sends every num to the pool, fib(0) included', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', FIB_INLINE_MAX_NUM: '0' })
  const res = (await app.inject('/fib?num=0')).json()
  t.match(res, { num: 0, result: 0 })
  t.not(res.threadId, 0)
})

const BAD = {
  'num is missing': ['/fib', /num is required/],
  'num is empty': ['/fib?num=', /num is empty/],
  'num is given twice': ['/fib?num=5&num=6', /num was given 2 times/],
  'num is absurdly long': [`/fib?num=${'9'.repeat(5000)}`, /num is too long \(5000 characters\)/],
  'num is negative': ['/fib?num=-5', /num must not be negative/],
  'num is above the maximum': ['/fib?num=46', /num must be at most 45, got 46/],
  'num=abc': ['/fib?num=abc', /plain decimal integer .* got "abc"/],
  'num=1e2': ['/fib?num=1e2', /plain decimal integer .* got "1e2"/],
  'num=0x10': ['/fib?num=0x10', /plain decimal integer .* got "0x10"/],
  'num=%205 (a leading space)': ['/fib?num=%205', /plain decimal integer .* got " 5"/],
  'num=+5': ['/fib?num=%2B5', /plain decimal integer .* got "\+5"/],
  'num=1.5': ['/fib?num=1.5', /plain decimal integer .* got "1.5"/],
  'num=Infinity': ['/fib?num=Infinity', /plain decimal integer .* got "Infinity"/]
}

test('every kind of bad num is refused with 400 and a message saying what is wrong', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  for (const [what, [url, message]] of Object.entries(BAD)) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 400, what)
    t.match(res.headers['content-type'], 'application/json', what)
    t.match(res.json(), { statusCode: 400, error: 'Bad Request', code: 'FIB_NUM_INVALID', message, requestId: res.headers['x-request-id'] }, what)
  }
})

test('a task that throws gets a generic 500, logged with the request id, and the pool serves on', async (t) => {
  const { app, logs } = await build(t, { POOL_THREADS: '1' }, { task: TEST_TASK })
  const res = await app.inject({ url: `/fib?num=${THROWS}`, headers: { 'x-request-id': 'throws-1' } })
  t.equal(res.statusCode, 500)
  t.match(res.json(), { statusCode: 500, code: 'INTERNAL_ERROR', message: /request id throws-1/, requestId: 'throws-1' })
  t.notMatch(res.body, 'secret', 'internals are not sent')
  t.match(logs.find((line) => line.level === 50), { reqId: 'throws-1', err: { message: 'secret internal detail' } })
  t.equal((await app.inject('/fib?num=3')).statusCode, 200)
})

test('a worker that dies gets a 500, and the pool replaces the thread', async (t) => {
  const { app, logs } = await build(t, { POOL_THREADS: '1' }, { task: TEST_TASK })
  const before = (await app.inject('/fib?num=3')).json().threadId
  const res = await app.inject({ url: `/fib?num=${EXITS}`, headers: { 'x-request-id': 'exits-1' } })
  t.equal(res.statusCode, 500)
  t.match(logs.find((line) => line.level === 50), { reqId: 'exits-1', err: {} })
  const after = await app.inject('/fib?num=3')
  t.equal(after.statusCode, 200)
  t.not(after.json().threadId, before, 'a new thread took the dead one\'s place')
})

test('past REQUEST_TIMEOUT_MS a running task is cancelled with 504 and its thread replaced', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', REQUEST_TIMEOUT_MS: '200', FIB_MAX_NUM: '78' }, { task: TEST_TASK })
  const before = (await app.inject('/fib?num=3')).json().threadId
  const res = await app.inject('/fib?num=78') // 780 ms of work
  t.equal(res.statusCode, 504)
  t.match(res.json(), { code: 'DEADLINE_EXCEEDED', message: 'The task did not finish within 200 ms and was cancelled' })
  const after = (await app.inject('/fib?num=3')).json().threadId
  t.not(after, before, 'the thread that ran it was terminated and replaced')
})

test('the deadline counts the wait in the queue, not just the compute', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', REQUEST_TIMEOUT_MS: '300', FIB_MAX_NUM: '78' }, { task: TEST_TASK })
  // Admitted in the same tick: the first holds the only thread past the deadline (780 ms), so the
  // second, 30 ms of work, never gets a thread in time. Its 504 can only come from its wait.
  const [first, second] = await Promise.all([app.inject('/fib?num=78'), app.inject('/fib?num=3')])
  t.equal(first.statusCode, 504)
  t.equal(second.statusCode, 504)
  t.match(second.json(), { code: 'DEADLINE_EXCEEDED' })
  // Alone, the same task is in time (once the thread that replaced the first one's has started).
  await until(async () => (await app.inject('/fib?num=3')).statusCode === 200)
})

test('when the threads and the queue are full, a request is refused at once with 503 and Retry-After', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_TASKS_PER_THREAD: '1', POOL_MAX_QUEUE: '1' }, { task: TEST_TASK })
  // One on the thread, one in the queue.
  const admitted = [app.inject('/fib?num=20'), app.inject('/fib?num=20')]
  await until(() => app.pool.inFlight === 2)
  const res = await app.inject('/fib?num=3')
  t.equal(res.statusCode, 503)
  t.match(res.json(), { code: 'QUEUE_FULL', message: 'All 1 threads are busy and 1 tasks are queued (POOL_MAX_QUEUE); retry later' })
  t.ok(Number(res.headers['retry-after']) >= 1)
  t.same((await Promise.all(admitted)).map((r) => r.statusCode), [200, 200], 'the admitted ones still complete')
})

test('Retry-After is the predicted wait: the queued work and the work on the threads, divided by the threads, rounded up', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2', POOL_TASKS_PER_THREAD: '1', POOL_MAX_QUEUE: '3', REQUEST_TIMEOUT_MS: '5000' }, { task: SIZED_TEST_TASK })
  const admitted = Array.from({ length: 5 }, () => app.inject('/fib?num=45'))
  await until(() => app.pool.inFlight === 5)
  t.equal(app.pool.queuedWorkMs, 1350, '3 queued x 450 ms')
  const res = await app.inject('/fib?num=3')
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '2', '(1350 ms queued + 900 on the threads) / 2 threads = 1.125 s, rounded up')
  await Promise.all(admitted)
})

test('a 400 or a 504 carries no Retry-After: retrying the same request will not help', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', REQUEST_TIMEOUT_MS: '100', FIB_MAX_NUM: '78' }, { task: TEST_TASK })
  const bad = await app.inject('/fib?num=x')
  t.equal(bad.statusCode, 400)
  t.notOk('retry-after' in bad.headers)
  const late = await app.inject('/fib?num=50')
  t.equal(late.statusCode, 504)
  t.notOk('retry-after' in late.headers)
})

test('while shutting down, a new fib request gets 503 SHUTTING_DOWN', async (t) => {
  const { app } = await build(t)
  app.closing = true
  const res = await app.inject('/fib?num=3')
  t.equal(res.statusCode, 503)
  t.equal(res.json().code, 'SHUTTING_DOWN')
  t.equal(res.headers['retry-after'], '1')
  t.equal(res.headers.connection, 'close')
})

test('at LOG_REQUESTS=all, one log line per request carries num, status and duration', async (t) => {
  const { app, logs } = await build(t, { LOG_REQUESTS: 'all' })
  await app.inject({ url: '/fib?num=20', headers: { 'x-request-id': 'line-1' } })
  const lines = logs.filter((line) => line.reqId === 'line-1')
  t.equal(lines.length, 1)
  t.match(lines[0], { msg: 'request completed', num: 20, statusCode: 200, durationMs: Number, url: '/fib?num=20' })
})

test('a client that goes away cancels its task: with one thread, the next request is served at once', async (t) => {
  const { app, logs } = await build(t, { POOL_THREADS: '1', FIB_MAX_NUM: '78' }, { task: TEST_TASK })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${app.server.address().port}`
  const before = (await (await fetch(`${url}/fib?num=3`)).json()).threadId
  const gone = new AbortController()
  const abandoned = fetch(`${url}/fib?num=78`, { signal: gone.signal, headers: { 'x-request-id': 'gone-1' } })
  await until(() => app.pool.inFlight === 1)
  gone.abort()
  await t.rejects(abandoned)
  await until(() => app.pool.inFlight === 0)
  const next = await (await fetch(`${url}/fib?num=3`)).json()
  t.not(next.threadId, before, 'the thread computing for nobody was terminated and replaced')
  t.match(logs.find((line) => line.reqId === 'gone-1'), { msg: 'client closed the connection; task cancelled', num: 78 })
  t.same(logs.filter((line) => line.reqId === 'gone-1' && line.level >= 40), [], 'no answer attempted, so no warning or error about it')
  t.equal(value((await app.inject('/metrics')).body, 'fib_pool_tasks_aborted_total', 'reason="client_gone"'), 1)
})
