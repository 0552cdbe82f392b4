import { test } from 'tap'
import '../../src/pool/index.js'
import { keepThreadViews, piscinaWorkerInfo } from '../../src/pool/thread-views.js'
import { twoThreadPiscina } from '../helper.js'

test('with the pool loaded, Piscina\'s balancer sees one view a thread, run after run, reading the thread\'s state when asked', async (t) => {
  const { piscina, offers } = await twoThreadPiscina(t)
  const first = offers.at(-1)
  t.equal(first.length, 2, 'both threads started')
  const running = piscina.run({ num: 20 }, { signal: new AbortController().signal })
  const second = offers.at(-1)
  t.equal(second.length, 2, 'both threads were offered')
  for (const view of second) t.ok(first.includes(view), `thread ${view.id}: the same view as before`)
  t.same(second.map((view) => view.currentUsage).sort(), [0, Infinity], 'one thread now runs a task with a signal; its view says so')
  await running
  t.same(second.map((view) => view.currentUsage), [0, 0], 'and says it is done once it is')
})

test('a Piscina whose threads have no `interface` getter is left as it is', async (t) => {
  class Thread {}
  t.equal(keepThreadViews(Thread), false)
  t.same(Object.getOwnPropertyNames(Thread.prototype), ['constructor'])
})

test('a Piscina without the file of its threads\' class is left as it is, and the service starts', async (t) => {
  t.equal(piscinaWorkerInfo('/nowhere/dist/main.js'), undefined)
  t.equal(keepThreadViews(undefined), false)
  t.equal(typeof piscinaWorkerInfo(), 'function', 'the installed Piscina has it')
})
