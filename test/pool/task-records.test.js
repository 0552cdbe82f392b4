import { setFlagsFromString, getHeapSpaceStatistics } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Piscina } from 'piscina'
import { test } from 'tap'
import '../../src/pool/index.js'
import { keepTaskRecordsYoung, piscinaTaskModules } from '../../src/pool/task-records.js'
import { BARE, TEST_TASK, twoThreadPiscina } from '../helper.js'

const modules = piscinaTaskModules()

// Piscina's own TaskInfo: what the record class inherits from.
const originalTaskInfo = () => Object.getPrototypeOf(modules.taskQueue.TaskInfo.prototype).constructor

test('with the pool loaded, each task Piscina runs gets a record of the pool\'s class, a TaskInfo still', async (t) => {
  const { TaskInfo } = modules.taskQueue
  t.not(TaskInfo, originalTaskInfo(), 'run() builds its records with the replacement')
  const callback = () => {}
  const record = new TaskInfo({ task: { num: 3 }, transferList: [], filename: 'f.js', name: 'default', abortSignal: null, triggerAsyncId: 1 }, callback)
  t.ok(record instanceof originalTaskInfo(), 'instanceof TaskInfo')
  t.match(record, { workerInfo: null, aborted: false, _abortCleaner: null, callback, task: { num: 3 }, transferList: [], filename: 'f.js', name: 'default', abortSignal: null, started: 0 })
  t.type(record.created, 'number')
  t.equal(record.releaseTask().num, 3, 'TaskInfo\'s methods')
  const next = new TaskInfo({ task: {}, transferList: [], filename: 'f.js', name: 'default', abortSignal: null, triggerAsyncId: 1 }, callback)
  t.not(next.taskId, record.taskId, 'each its own id')
  record._abortListener()
  t.equal(record.aborted, true, 'its listener marks it aborted')
  let called = 0
  next.onAbort(() => called++)
  next._abortListener()
  t.same([next.aborted, called], [true, 1], 'and onAbort()\'s runs what it was given too')

  const buffer = new ArrayBuffer(8)
  const moved = new TaskInfo({ task: Piscina.move(buffer), transferList: undefined, filename: 'f.js', name: 'default', abortSignal: null, triggerAsyncId: 1 }, callback)
  t.equal(moved.task, buffer, 'a task made with Piscina.move() is sent as its value')
  t.same(moved.transferList, [buffer], 'and transferred')
  const other = new ArrayBuffer(4)
  const both = new TaskInfo({ task: Piscina.move(buffer), transferList: [other], filename: 'f.js', name: 'default', abortSignal: null, triggerAsyncId: 1 }, callback)
  t.same(both.transferList, [other, buffer], 'beside what the caller transfers')
})

test('tasks run, and a task with a signal is cancelled, through the replacement', async (t) => {
  const { piscina } = await twoThreadPiscina(t)
  t.equal((await piscina.run({ num: 0 })).result, 0)
  const controller = new AbortController()
  const running = piscina.run({ num: 50 }, { signal: controller.signal })
  controller.abort()
  await t.rejects(running, { name: 'AbortError' }, 'cancelled: its thread is terminated')
  t.equal((await piscina.run({ num: 0 })).result, 0, 'the pool runs on')
})

// Batches of tasks, 4 in flight on 2 threads; once a batch has ended and the main thread has idled,
// a young collection, and what it still finds alive. The bytes a task: the difference between a
// batch of 600 and one of 150, over the 450 tasks between them, so that what the process holds
// whatever the tasks (a test runner's buffers) cancels out; the median of 5 pairs. With Piscina's
// own record (the install in src/pool/index.js left out) the median read about 720, with the
// pool's 0-2 (docs/benchmarks.md, "What a request leaves in the old space").
test('a task leaves nothing alive past the next scavenge once it has ended', async (t) => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc')
  const piscina = new Piscina({ filename: TEST_TASK.file, minThreads: 2, maxThreads: 2, concurrentTasksPerWorker: 2, execArgv: BARE })
  t.teardown(() => piscina.close())
  const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_used_size
  async function aliveAfter (tasks) {
    let next = 0
    const worker = async () => { while (next++ < tasks) await piscina.run({ num: 0 }) }
    await Promise.all([worker(), worker(), worker(), worker()])
    await new Promise((resolve) => setTimeout(resolve, 30))
    gc({ type: 'minor' })
    const alive = young()
    // A second one, so that the next batch starts with nothing young but its own.
    gc({ type: 'minor' })
    return alive
  }
  const perTask = []
  for (let pair = 0; pair < 5; pair++) {
    const few = await aliveAfter(150)
    perTask.push((await aliveAfter(600) - few) / 450)
  }
  const median = perTask.sort((a, b) => a - b)[2]
  t.ok(median < 200, `bytes a task alive past a scavenge: ${perTask.map(Math.round).join(', ')}`)
})

test('a Piscina without its task modules, or whose TaskInfo writes no function into a property, is left as it is', async (t) => {
  t.equal(piscinaTaskModules('/nowhere/dist/index.js'), undefined)
  t.equal(keepTaskRecordsYoung(undefined), false)
  class TaskInfo {
    constructor () {
      const listener = () => {}
      this._abortListener = listener
    }
  }
  const taskQueue = { TaskInfo }
  t.equal(keepTaskRecordsYoung({ taskQueue, common: {}, symbols: {} }), false)
  t.equal(taskQueue.TaskInfo, TaskInfo)
})
