// The service's queue of tasks waiting for a thread: cheapest first, and no task overtaken by
// more than a set amount of cheaper work, so an expensive task never starves.
//
// A plain data structure: no threads, no clock. A cost is any measure proportional to compute
// time (the pool uses the task's size, so that the order of two tasks never changes while the
// cost model learns). Kept as an array in start order: it holds at most POOL_MAX_QUEUE tasks,
// and an insertion is one pass over them (microseconds for hundreds).

export class CostQueue {
  #entries = []
  #work = 0
  #bypass

  // `bypass()`: the cost of the work that may be placed ahead of a task after it was queued,
  // asked at each placement, so that the pool can follow its cost model's rate.
  constructor ({ bypass }) {
    this.#bypass = bypass
  }

  get size () {
    return this.#entries.length
  }

  // Cost of every waiting task.
  get work () {
    return this.#work
  }

  // Where a task of `cost` would wait, and the cost of the work ahead of it there, without
  // queueing it: behind every task that costs no more (ties keep their order), and behind any
  // task that cheaper work has already overtaken by as much as it may be.
  place (cost) {
    const entries = this.#entries
    const bypass = this.#bypass()
    let index = entries.length
    while (index > 0 && entries[index - 1].cost > cost) index--
    for (let i = index; i < entries.length; i++) {
      if (entries[i].bypassed + cost > bypass) index = i + 1
    }
    let ahead = 0
    for (let i = 0; i < index; i++) ahead += entries[i].cost
    return { index, ahead }
  }

  // Queues `item` at the place `place(cost)` gave (computed again when not given); returns
  // the entry, for `delete`.
  push (item, cost, { index } = this.place(cost)) {
    const entry = { item, cost, bypassed: 0 }
    for (let i = index; i < this.#entries.length; i++) this.#entries[i].bypassed += cost
    this.#entries.splice(index, 0, entry)
    this.#work += cost
    return entry
  }

  // The cost of the next task to start, or undefined when none waits.
  peek () {
    return this.#entries[0]?.cost
  }

  // The next task to start, or undefined when none waits.
  shift () {
    const entry = this.#entries.shift()
    if (entry === undefined) return undefined
    this.#take(entry)
    return entry.item
  }

  // Removes a waiting task (cancelled); false when it is no longer queued.
  delete (entry) {
    const index = this.#entries.indexOf(entry)
    if (index === -1) return false
    this.#entries.splice(index, 1)
    this.#take(entry)
    return true
  }

  #take (entry) {
    // Reset when empty, so that rounding never leaves a ghost of work behind.
    this.#work = this.#entries.length === 0 ? 0 : this.#work - entry.cost
  }
}
