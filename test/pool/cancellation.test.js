import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { test } from 'tap'
import { Cancellation } from '../../src/pool/cancellation.js'

const FIB = fileURLToPath(new URL('../../workers/fib.js', import.meta.url))

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

test('a graceful abort cancels at once and tells the listeners graceMs later, or never once settled first', async (t) => {
  const heard = []
  const cancel = new Cancellation()
  cancel.graceMs = 30
  cancel.on('abort', () => heard.push('late'))
  cancel.abort('client_gone', true)
  t.match(cancel, { aborted: true, cause: 'client_gone' }, 'cancelled at once')
  t.same(heard, [], 'its listeners not told yet')
  await sleep(60)
  t.same(heard, ['late'])

  const settled = new Cancellation()
  settled.graceMs = 30
  settled.on('abort', () => heard.push('settled'))
  settled.abort('client_gone', true)
  settled.settled()
  await sleep(60)
  t.same(heard, ['late'], 'a settled task\'s listeners are never told')
})

test('an abort that is not graceful, or one without a grace, tells the listeners at once', async (t) => {
  for (const [graceMs, graceful] of [[30, false], [0, true]]) {
    const cancel = new Cancellation()
    cancel.graceMs = graceMs
    let heard = 0
    cancel.on('abort', () => heard++)
    cancel.abort('deadline', graceful)
    t.equal(heard, 1, `graceMs ${graceMs}, graceful ${graceful}`)
  }
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
