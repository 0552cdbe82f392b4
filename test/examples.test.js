// The examples docs/your-own-task.md and docs/operations.md show: a second task on the pool, and
// a client that honours Retry-After.
import { once } from 'node:events'
import { createServer } from 'node:http'
import { performance } from 'node:perf_hooks'
import { test } from 'tap'
import { build, MAX_BELOW, PRIMES_TASK } from '../examples/primes/app.js'
import primesTask from '../examples/primes/worker.js'
import { getWithRetry } from '../examples/retry-after.js'
import { BARE, until } from './helper.js'

test('the sieve counts the primes below n', async (t) => {
  const counts = [[0, 0], [2, 0], [3, 1], [10, 4], [100, 25], [1_000_000, 78_498]]
  for (const [below, primes] of counts) t.equal(primesTask({ below }).result, primes, `below ${below}`)
})

test('GET /primes runs the task on the pool\'s threads, and refuses what is not a size', async (t) => {
  const app = await build({ env: { POOL_THREADS: '2' }, execArgv: BARE })
  t.teardown(() => app.close())
  const answers = await Promise.all([2_000_000, 3_000_000].map((below) => app.inject(`/primes?below=${below}`)))
  t.same(answers.map((res) => res.json().primes), [148_933, 216_816])
  t.ok(answers.every((res) => res.json().threadId > 0), 'computed on worker threads')
  t.ok(app.pool.predict({ below: 2_000_000 }) > 0, 'the cost model learned the task at start')
  for (const query of ['below=1e6', 'below=-5', 'below=', '', 'below=%205', `below=${MAX_BELOW + 1}`]) {
    const res = await app.inject(`/primes?${query}`)
    t.equal(res.statusCode, 400, `?${query}: 400`)
    t.equal(res.json().code, 'BAD_REQUEST')
  }
  t.match((await app.inject(`/primes?below=${MAX_BELOW + 1}`)).json().message, /at most 10000000/)
})

test('known sizes let a small task overtake a big one in the queue; unknown sizes keep arrival order', async (t) => {
  for (const [task, expected] of [[PRIMES_TASK, ['small', 'big']], [{ ...PRIMES_TASK, work: () => 1 }, ['big', 'small']]]) {
    // The queue's order alone: both tasks wait in it, none on the busy thread (one task a thread),
    // and the small one does not start at once on the express thread, as it would either way with
    // a mean task under POOL_EXPRESS_MAX_MS (the sieve's: about 2.5 ms).
    const env = { POOL_THREADS: '1', POOL_TASKS_PER_THREAD: '1', POOL_EXPRESS_MAX_MS: '0' }
    const app = await build({ env, task, execArgv: BARE })
    const order = []
    // The one thread busy, then a big task and a small one.
    const first = app.inject('/primes?below=5000000')
    await until(() => app.pool.busy === 1)
    const big = app.inject('/primes?below=4000000').then(() => order.push('big'))
    const small = app.inject('/primes?below=1000').then(() => order.push('small'))
    await Promise.all([first, big, small])
    await app.close()
    t.same(order, expected, expected.join(' then '))
  }
})

test('the client retries a 503 after Retry-After, and gives up when told to wait too long', async (t) => {
  const answers = []
  const server = createServer((req, res) => {
    const [status, retryAfter] = answers.shift()
    if (retryAfter !== undefined) res.setHeader('retry-after', retryAfter)
    res.writeHead(status).end('{}')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${server.address().port}/fib?num=30`

  answers.push([503, '1'], [200])
  const started = performance.now()
  t.equal((await getWithRetry(url)).status, 200, 'the retry got the answer')
  t.ok(performance.now() - started >= 1000, 'after the second Retry-After asked for')

  answers.push([503, '0'], [503, '0'])
  t.equal((await getWithRetry(url, { attempts: 2 })).status, 503, 'attempts are bounded')
  t.equal(answers.length, 0, 'both attempts were made')

  for (const [retryAfter, why] of [['60', 'a wait over maxWaitSeconds is not started'], ['soon', 'a Retry-After that is not seconds is not guessed at']]) {
    answers.length = 0
    answers.push([503, retryAfter], [200])
    t.equal((await getWithRetry(url)).status, 503, why)
    t.equal(answers.length, 1, 'not retried')
  }
  answers.length = 0
  answers.push([503], [404])
  t.equal((await getWithRetry(url)).status, 404, 'no Retry-After: retried after a second; any other status returned')
})
