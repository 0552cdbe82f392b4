import { test } from 'tap'
import { build, until } from './helper.js'

// Blocks the main thread, as a flood of requests would.
function busyMainThread (ms) {
  const end = Date.now() + ms
  while (Date.now() < end);
}

const OFF = { PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0', PRESSURE_MAX_ELU: '0', PRESSURE_MAX_HEAP_BYTES: '0', PRESSURE_MAX_RSS_BYTES: '0' }

test('over a memory limit, /fib and /ready are shed with 503 UNDER_PRESSURE; /health and /docs still answer', async (t) => {
  for (const [setting, what] of [['PRESSURE_MAX_HEAP_BYTES', /heap \d+ bytes is over 1\b/], ['PRESSURE_MAX_RSS_BYTES', /RSS \d+ bytes is over 1\b/]]) {
    const { app } = await build(t, { POOL_THREADS: '1', ...OFF, [setting]: '1' })
    let res
    await until(async () => {
      res = await app.inject('/fib?num=3')
      return res.statusCode === 503
    })
    t.match(res.json(), { statusCode: 503, code: 'UNDER_PRESSURE', message: what }, setting)
    t.equal(res.headers['retry-after'], '1')
    t.equal((await app.inject('/ready')).json().code, 'UNDER_PRESSURE')
    t.equal((await app.inject('/health')).statusCode, 200, 'liveness is never shed')
    t.equal((await app.inject('/docs/json')).statusCode, 200)
  }
})

test('a busy main thread sheds work until it recovers', async (t) => {
  for (const [setting, limit, what] of [
    ['PRESSURE_MAX_ELU', '0.5', /event-loop utilisation [01]\.\d+ is over 0\.5/],
    ['PRESSURE_MAX_EVENT_LOOP_DELAY_MS', '1', /event-loop delay (\d+|Infinity) ms is over 1 ms/]
  ]) {
    const { app } = await build(t, { POOL_THREADS: '1', ...OFF, [setting]: limit })
    let res
    await until(async () => {
      busyMainThread(1200) // spans at least two samples
      res = await app.inject('/fib?num=3')
      return res.statusCode === 503
    })
    t.match(res.json(), { code: 'UNDER_PRESSURE', message: what }, setting)
    await until(async () => (await app.inject('/fib?num=3')).statusCode === 200)
    t.pass(`${setting}: back to 200 once the main thread is idle again`)
  }
})
