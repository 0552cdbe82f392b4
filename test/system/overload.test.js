// Offered load far beyond capacity must not collapse the service.
import { test } from 'tap'
import { build, until } from '../helper.js'

const CLIENTS = 64
const LOAD_MS = 3000
const MAX_REQUESTS_PER_CLIENT = 2000

test('64 clients of fib(32) on 2 threads: excess is a fast 503, the rest succeed, and it recovers at once', async (t) => {
  // A quarter second of queue (POOL_MAX_WAIT_MS) admits about 20 fib(32) on 2 threads: 64 clients
  // are far beyond it. Every other setting at its default.
  const { app } = await build(t, { POOL_THREADS: '2', POOL_MAX_WAIT_MS: '250' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${app.server.address().port}/fib?num=32`
  const statuses = {}
  const failures = []
  let computeMs = 0
  let shedWithoutRetryAfter = 0
  let maxInFlight = 0
  const latencyMs = { 200: [], 503: [] }
  const sampler = setInterval(() => { maxInFlight = Math.max(maxInFlight, app.pool.inFlight) }, 2)
  // The model learns at each completion: the cheapest it ever predicted fib(32).
  let minCostMs = app.pool.predict({ num: 32 })
  app.pool.events.on('completed', () => { minCostMs = Math.min(minCostMs, app.pool.predict({ num: 32 })) })

  const started = Date.now()
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    for (let i = 0; i < MAX_REQUESTS_PER_CLIENT && Date.now() - started < LOAD_MS; i++) {
      try {
        const sent = performance.now()
        const res = await fetch(url)
        const body = await res.json()
        latencyMs[res.status]?.push(performance.now() - sent)
        statuses[res.status] = (statuses[res.status] ?? 0) + 1
        if (res.status === 200) computeMs += body.computeMs
        if (res.status === 503 && !(Number(res.headers.get('retry-after')) >= 1)) shedWithoutRetryAfter++
      } catch (err) {
        failures.push(err)
      }
    }
  }))
  const elapsedMs = Date.now() - started
  clearInterval(sampler)

  t.same(Object.keys(statuses).sort(), ['200', '503'], 'only successes and sheds, no other status')
  t.same(failures, [], 'no connection errors')
  t.equal(shedWithoutRetryAfter, 0, 'every 503 says when to retry')
  // At most 2 tasks on each thread, and as many queued as fit in POOL_MAX_WAIT_MS on every thread at the
  // cheapest the model predicted fib(32) during the run, plus the one that reached the bound.
  const bound = 4 + Math.floor(app.pool.maxWaitMs * app.pool.threads / minCostMs) + 1
  t.ok(maxInFlight <= bound, `admitted work stays bounded by the predicted wait (${maxInFlight} <= ${bound})`)
  t.ok(bound < CLIENTS, `a bound below the clients' number (${bound} < ${CLIENTS})`)
  // The threads stay busy with useful work: no collapse into shedding only.
  const busy = computeMs / (app.pool.threads * elapsedMs)
  t.ok(busy > 0.3, `threads spent ${(busy * 100).toFixed(0)}% of the run computing answers that were delivered`)

  const median = (values) => values.sort((a, b) => a - b)[values.length >> 1]
  t.ok(median(latencyMs[503]) < median(latencyMs[200]), `a shed is answered faster than a success (median ${median(latencyMs[503]).toFixed(1)} ms vs ${median(latencyMs[200]).toFixed(1)} ms)`)

  const stopped = Date.now()
  await until(async () => (await app.inject('/ready')).statusCode === 200 && app.pool.inFlight === 0, 1000)
  t.pass(`ready again ${Date.now() - stopped} ms after the load stopped`)
  t.equal((await app.inject('/fib?num=20')).statusCode, 200)
})
