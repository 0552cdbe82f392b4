// Each Piscina task's record, made without a function that V8 puts in the old space.
//
// V8 allocates a function written straight into a property (`this.f = () => {}`) in the old space
// at once: it takes it for a method set up once. Piscina 5.3's TaskInfo, the record of each task,
// gives every task such a function in its constructor (`this._abortListener = () => ...`), and
// another in onAbort() for a task with a signal. Each is garbage as soon as its task ends, but it
// stays in the old space until the whole heap is collected, and its scope holds the task's
// record, with the task's promise and what it resolved with: every scavenge until then keeps them
// and moves them into the old space in turn. The same function, named by a local first and then
// stored, is made in the young space like the rest of the task. After a batch of tasks on 2 threads
// had ended, a young collection still found 700-1,050 bytes a task alive with Piscina's record,
// and 8-50 in most batches with this one; at fib(27), 4 connections, the service moved 54-58
// bytes a request into the old space and paused 0.6-0.7 ms a scavenge, against 107-135 bytes and
// 0.9-1.8 ms (docs/benchmarks.md, "What a request leaves in the old space").
import { AsyncResource } from 'node:async_hooks'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)

// What Piscina 5.3's TaskInfo does that this module undoes: a function written into a property.
const FUNCTION_INTO_PROPERTY = /this\._abortListener = \(\) =>/

// Piscina's module of task records and queues, beside the package's main file (it is not among
// Piscina's exports), with the helpers a record needs; undefined when a later version has no such
// files.
export function piscinaTaskModules (main = require.resolve('piscina')) {
  try {
    const dist = dirname(main)
    return { taskQueue: require(join(dist, 'task_queue/index.js')), common: require(join(dist, 'common.js')), symbols: require(join(dist, 'symbols.js')) }
  } catch {
    return undefined
  }
}

// Makes Piscina's run() build each task's record with this module's class: the same fields and
// methods (it inherits TaskInfo's), each function named by a local before it is stored. Returns
// whether it did: Piscina is left as it is when its modules are not there, or when its TaskInfo no
// longer writes a function into `_abortListener`.
export function keepTaskRecordsYoung (modules) {
  const TaskInfo = modules?.taskQueue.TaskInfo
  if (typeof TaskInfo !== 'function' || !FUNCTION_INTO_PROPERTY.test(Function.prototype.toString.call(TaskInfo))) return false
  const { common: { isMovable }, symbols: { kTransferable, kValue } } = modules
  // Negative, so that no id meets one Piscina's own counter gave before this ran.
  let lastId = 0

  // Piscina 5.3's TaskInfo constructor, field for field.
  class TaskRecord extends AsyncResource {
    constructor ({ task, transferList, filename, name, abortSignal, triggerAsyncId }, callback) {
      super('Piscina.Task', { requireManualDestroy: true, triggerAsyncId })
      const abortListener = () => { this.aborted = true }
      this.workerInfo = null
      this.aborted = false
      this._abortListener = abortListener
      this._abortCleaner = null
      this.callback = callback
      this.task = task
      this.transferList = transferList
      if (isMovable(task)) {
        this.transferList = (this.transferList ?? []).concat(task[kTransferable])
        this.task = task[kValue]
      }
      this.filename = filename
      this.name = name
      this.taskId = --lastId
      this.abortSignal = abortSignal
      this.created = performance.now()
      this.started = 0
    }

    onAbort (value) {
      const abortListener = () => {
        this.aborted = true
        value()
      }
      this._abortListener = abortListener
    }
  }
  // The rest of TaskInfo's methods, and `instanceof TaskInfo`.
  Object.setPrototypeOf(TaskRecord.prototype, TaskInfo.prototype)
  modules.taskQueue.TaskInfo = TaskRecord
  return true
}
