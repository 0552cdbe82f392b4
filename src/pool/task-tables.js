// Each Piscina thread's table of its tasks in flight as two short arrays, in place of a Map.
//
// Piscina 5.3 keeps a thread's tasks in a Map keyed by a task id that grows with every task: each
// task is set, then deleted. V8 rebuilds a Map's hash table as deleted entries pile up, and links
// the table it replaces to the new one (for iterators still walking it). Once one of those tables
// has reached the old space, the tables built after it, and the tasks they held, outlive the
// scavenges until the whole heap is collected. In a loop of fib(22) on 2 Piscina threads, 4 tasks in
// flight and no HTTP, the main thread's heap grew 0.5-0.9 MB a scavenge with the Map and not at all
// with this table. In the service at fib(20), what the main thread moved there fell from 0.9-5.4
// bytes per kB allocated to 0.4-0.6, five runs each (docs/benchmarks.md, "What a request leaves in
// the old space"). A thread holds one or two tasks (POOL_TASKS_PER_THREAD), so a search of an
// array costs no more than a hash.

// What Piscina does with a thread's `taskInfos`: has, get, set, delete, clear, size, values() and
// iteration over [id, task] pairs, in the order they were set.
export class TaskTable {
  #ids = []
  #tasks = []

  get size () {
    return this.#ids.length
  }

  has (id) {
    return this.#ids.includes(id)
  }

  get (id) {
    const at = this.#ids.indexOf(id)
    return at === -1 ? undefined : this.#tasks[at]
  }

  set (id, task) {
    const at = this.#ids.indexOf(id)
    if (at !== -1) {
      this.#tasks[at] = task
      return this
    }
    this.#ids.push(id)
    this.#tasks.push(task)
    return this
  }

  delete (id) {
    const at = this.#ids.indexOf(id)
    if (at === -1) return false
    this.#ids.splice(at, 1)
    this.#tasks.splice(at, 1)
    return true
  }

  clear () {
    this.#ids.length = 0
    this.#tasks.length = 0
  }

  values () {
    return this.#tasks.slice().values()
  }

  [Symbol.iterator] () {
    return this.#ids.map((id, at) => [id, this.#tasks[at]]).values()
  }
}

// Gives every thread Piscina starts from now on a TaskTable: Piscina's constructor assigns
// `this.taskInfos = new Map()`, and a setter on the prototype takes that assignment. Returns
// whether it did: Piscina is left as it is when its threads' class is not there, or already has
// something of that name on its prototype.
export function keepTaskTables (WorkerInfo) {
  if (WorkerInfo === undefined || 'taskInfos' in WorkerInfo.prototype) return false
  // eslint-disable-next-line accessor-pairs -- read from the thread's own property, set here
  Object.defineProperty(WorkerInfo.prototype, 'taskInfos', {
    configurable: true,
    set (tasks) {
      const table = new TaskTable()
      for (const [id, task] of tasks) table.set(id, task)
      Object.defineProperty(this, 'taskInfos', { value: table, writable: true, configurable: true, enumerable: true })
    }
  })
  return true
}
