import { performance } from 'node:perf_hooks'
import { isMainThread, threadId } from 'node:worker_threads'
import { test } from 'tap'
import { Piscina } from 'piscina'
import fibTask from '../../workers/fib.js'

const KNOWN = [[0, 0], [1, 1], [2, 1], [10, 55], [20, 6765], [30, 832040]]

test('the task computes the Fibonacci numbers, fib(0) = 0 and fib(1) = 1', async (t) => {
  for (const [num, expected] of KNOWN) t.equal(fibTask({ num }).result, expected, `fib(${num})`)
})

test('the task reports its thread and its compute time, within the time the call took', async (t) => {
  const before = performance.now()
  const { threadId: ranOn, computeMs } = fibTask({ num: 25 })
  const callMs = performance.now() - before
  t.ok(isMainThread)
  t.equal(ranOn, threadId)
  t.ok(computeMs > 0 && computeMs <= callMs, `${computeMs} ms of a ${callMs} ms call`)
})

test('through a pool, the task runs on a worker thread, not the main one', async (t) => {
  const pool = new Piscina({ filename: new URL('../../workers/fib.js', import.meta.url).href, maxThreads: 1 })
  t.teardown(() => pool.destroy())
  const out = await pool.run({ num: 30 })
  t.equal(out.result, 832040)
  t.not(out.threadId, threadId)
})
