import { test } from 'tap'
import '../../src/pool/index.js'
import { keepTaskTables, TaskTable } from '../../src/pool/task-tables.js'
import { twoThreadPiscina } from '../helper.js'

// Piscina's thread behind a view its balancer is given.
const threadOf = (view) => view[Object.getOwnPropertySymbols(view).find((symbol) => symbol.description === 'Piscina.kWorkerData')]

test('a TaskTable answers as the Map it replaces, for what Piscina asks of it', async (t) => {
  const table = new TaskTable()
  t.equal(table.size, 0)
  t.equal(table.get(1), undefined)
  t.equal(table.delete(1), false, 'nothing to delete')
  t.equal(table.set(7, 'a'), table, 'set returns the table')
  table.set(8, 'b').set(9, 'c')
  t.equal(table.size, 3)
  t.ok(table.has(8))
  t.notOk(table.has(10))
  t.equal(table.get(9), 'c')
  table.set(8, 'B')
  t.equal(table.size, 3, 'setting a present id replaces its task')
  t.same([...table], [[7, 'a'], [8, 'B'], [9, 'c']], 'iterated as [id, task] in the order first set')
  t.equal(table.delete(8), true)
  t.equal(table.get(8), undefined)
  const [[, first]] = table
  t.equal(first, 'a', 'the first task, read as Piscina reads the only one')
  const values = table.values()
  table.clear()
  t.same([...values], ['a', 'c'], 'values() holds what was there when asked, whatever happens to the table after')
  t.equal(table.size, 0)
  t.same([...table], [])
})

test('with the pool loaded, each Piscina thread holds its tasks in a TaskTable, cancellation included', async (t) => {
  const { piscina, offers } = await twoThreadPiscina(t)
  const views = offers.at(-1)
  t.equal(views.length, 2, 'both threads started')
  for (const view of views) t.type(threadOf(view).taskInfos, TaskTable, `thread ${view.id}`)

  const controller = new AbortController()
  const running = piscina.run({ num: 50 }, { signal: controller.signal })
  t.same(views.map((view) => view.currentUsage).sort(), [0, Infinity], 'a running task with a signal is seen as one (isRunningAbortableTask)')
  const busy = views.find((view) => view.currentUsage === Infinity)
  t.equal(threadOf(busy).taskInfos.size, 1)
  controller.abort()
  await t.rejects(running, { name: 'AbortError' }, 'cancelled: its thread is terminated')
  t.equal(threadOf(busy).taskInfos.size, 0, 'and its table emptied')
  t.equal((await piscina.run({ num: 3 })).result, 3, 'the pool runs on')
})

test('a thread class assigning its tasks a Map gets a TaskTable with the same tasks', async (t) => {
  class Thread {
    constructor () {
      this.taskInfos = new Map([[3, 'c'], [4, 'd']])
    }
  }
  t.equal(keepTaskTables(Thread), true)
  const thread = new Thread()
  t.type(thread.taskInfos, TaskTable)
  t.same([...thread.taskInfos], [[3, 'c'], [4, 'd']])
  thread.taskInfos = new Map()
  t.type(thread.taskInfos, Map, 'a later assignment sets the thread\'s own property')
})

test('a Piscina without its threads\' class, or with `taskInfos` on its prototype, is left as it is', async (t) => {
  t.equal(keepTaskTables(undefined), false)
  class Thread {
    get taskInfos () { return 'own' }
  }
  t.equal(keepTaskTables(Thread), false)
  t.equal(new Thread().taskInfos, 'own')
})
