import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { test } from 'tap'
import { Cancellation, Deadlines } from '../../src/pool/cancellation.js'

const FIB = fileURLToPath(new URL('../../workers/fib.js', import.meta.url))
const TIMEOUT_MS = 40

async function until (condition) {
  while (!condition()) await sleep(2)
}

// A cancellation added to `deadlines` now, which records when and why it was aborted.
function timed (deadlines, aborts) {
  const cancel = new Cancellation()
  const added = performance.now()
  cancel.once('abort', () => aborts.push({ cancel, afterMs: performance.now() - added, cause: cancel.cause }))
  deadlines.add(cancel)
  return cancel
}

const timers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length

test('a cancellation aborts once, keeping its first cause, with the reason AbortController gives', async (t) => {
  const cancel = new Cancellation()
  let emitted = 0
  cancel.on('abort', () => emitted++)
  t.equal(cancel.aborted, false)
  cancel.abort('client_gone')
  cancel.abort('deadline')
  t.equal(emitted, 1)
  t.equal(cancel.aborted, true)
  t.equal(cancel.cause, 'client_gone')
  t.ok(cancel.reason instanceof DOMException)
  t.equal(cancel.reason.name, 'AbortError')
})

test('Piscina takes a cancellation as a task\'s signal: a running task is stopped, an aborted one never starts', async (t) => {
  const piscina = new Piscina({ filename: FIB, minThreads: 1, maxThreads: 1 })
  t.teardown(() => piscina.destroy())
  // A warm idle thread: the next task goes to it at once.
  await piscina.run({ num: 1 })
  const cancel = new Cancellation()
  // Seconds of compute: only a terminated thread ends it before the test's timeout.
  const running = piscina.run({ num: 45 }, { signal: cancel })
  t.equal(piscina.queueSize, 0, 'the task is on the thread')
  await sleep(20)
  cancel.abort('client_gone')
  await t.rejects(running, { name: 'AbortError' })
  await t.rejects(piscina.run({ num: 1 }, { signal: cancel }), { name: 'AbortError' }, 'already aborted')
  t.equal((await piscina.run({ num: 10 })).result, 55, 'the pool still answers')
})

test('each cancellation is aborted at its own deadline, never before, in the order added', async (t) => {
  const deadlines = new Deadlines(TIMEOUT_MS)
  const aborts = []
  const first = timed(deadlines, aborts)
  await sleep(15)
  const second = timed(deadlines, aborts)
  await until(() => aborts.length === 2)
  t.same(aborts.map((abort) => abort.cancel), [first, second])
  for (const { afterMs, cause } of aborts) {
    t.ok(afterMs >= TIMEOUT_MS, `aborted ${afterMs.toFixed(1)} ms after it was added`)
    t.equal(cause, 'deadline')
  }
  t.equal(deadlines.size, 0)
})

test('a deleted cancellation is never aborted, and the one after it still waits for its own deadline', async (t) => {
  const deadlines = new Deadlines(TIMEOUT_MS)
  const aborts = []
  const first = timed(deadlines, aborts)
  await sleep(15)
  const second = timed(deadlines, aborts)
  deadlines.delete(first)
  await until(() => aborts.length === 1)
  t.equal(aborts[0].cancel, second)
  t.ok(aborts[0].afterMs >= TIMEOUT_MS, `aborted ${aborts[0].afterMs.toFixed(1)} ms after it was added`)
  await sleep(TIMEOUT_MS)
  t.equal(first.aborted, false)
})

test('a cancellation aborted for another cause is still deleted by its task, and nothing fires for it', async (t) => {
  const deadlines = new Deadlines(TIMEOUT_MS)
  const aborts = []
  const cancel = timed(deadlines, aborts)
  cancel.abort('client_gone')
  deadlines.delete(cancel)
  await sleep(TIMEOUT_MS + 20)
  t.same(aborts.map(({ cause }) => cause), ['client_gone'])
})

test('one timer for any number of cancellations, and none once nothing is left to time', async (t) => {
  const before = timers()
  const deadlines = new Deadlines(TIMEOUT_MS)
  const cancels = [new Cancellation(), new Cancellation(), new Cancellation()]
  for (const cancel of cancels) deadlines.add(cancel)
  t.equal(timers(), before + 1)
  for (const cancel of cancels) deadlines.delete(cancel)
  t.equal(timers(), before, 'no timer holds the process open')
  await sleep(TIMEOUT_MS + 20)
  t.ok(cancels.every((cancel) => !cancel.aborted))
})
