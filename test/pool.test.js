import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'tap'
import { build } from './helper.js'

const threadIds = (app) => app.pool.piscina.threads.map((thread) => thread.threadId).sort()

test('the pool starts POOL_THREADS threads at once and keeps the same ones', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2' })
  t.equal(app.pool.threads, 2)
  const started = threadIds(app)
  t.equal(started.length, 2, 'both threads exist before the first request')
  const seen = new Set()
  for (let round = 0; round < 3; round++) {
    const results = await Promise.all(Array.from({ length: 8 }, () => app.inject('/fib?num=25')))
    for (const res of results) seen.add(res.json().threadId)
    await sleep(300) // idle between bursts: no idle timeout may retire a thread
  }
  t.same([...seen].sort(), started, 'every task ran on one of the threads started first')
  t.same(threadIds(app), started)
})

test('closing the app closes the pool', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  await app.close()
  t.equal(app.pool.piscina.threads.length, 0)
})

test('the capacity is the threads plus POOL_MAX_QUEUE', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2', POOL_MAX_QUEUE: '3' })
  t.equal(app.pool.capacity, 5)
  t.equal(app.pool.inFlight, 0)
  t.equal(app.pool.full, false)
})
