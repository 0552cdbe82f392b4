// The service's queue of tasks waiting for a thread, in order of virtual deadline: each task is
// given one as it arrives (the pool computes it: arrival plus an allowance that grows with the
// task's predicted cost), and the earliest starts first. A cheap task overtakes the dear ones
// that came shortly before it; a dear task is overtaken only by what arrives within its
// allowance, so it never starves, and never past what the pool allows it to wait (`passes`).
//
// A plain data structure: no threads, no clock. Each task carries its cost (any measure
// proportional to compute time: the pool uses the task's size) for the work counted ahead of it.
// Kept as an array in start order: it holds at most POOL_MAX_QUEUE tasks, and an insertion is one
// pass over them (microseconds for hundreds).

export class DeadlineQueue {
  #entries = []
  #work = 0

  get size () {
    return this.#entries.length
  }

  // Cost of every waiting task.
  get work () {
    return this.#work
  }

  // Where a task with virtual deadline `deadline` would wait, and the cost of the work ahead of
  // it there, without queueing it: behind every task whose deadline is not later (ties keep the
  // order they came in), and behind every task it may not pass: `passes(item, ahead)` says
  // whether it may go ahead of a waiting `item` with `ahead` cost before it now.
  place (deadline, passes = () => true) {
    const entries = this.#entries
    let index = entries.length
    while (index > 0 && entries[index - 1].deadline > deadline) index--
    let ahead = 0
    for (let i = 0; i < index; i++) ahead += entries[i].cost
    for (let i = index, before = ahead; i < entries.length; i++) {
      before += entries[i].cost
      if (!passes(entries[i].item, before - entries[i].cost)) {
        index = i + 1
        ahead = before
      }
    }
    return { index, ahead }
  }

  // Queues `item` of `cost` by `deadline` at the place `place(deadline)` gave (computed again when
  // not given); returns the entry, for `delete`.
  push (item, cost, deadline, { index } = this.place(deadline)) {
    const entry = { item, cost, deadline }
    this.#entries.splice(index, 0, entry)
    this.#work += cost
    return entry
  }

  // The waiting entries, as push() returned them, in start order.
  [Symbol.iterator] () {
    return this.#entries[Symbol.iterator]()
  }

  // Removes a waiting task (started, or cancelled); false when it is no longer queued.
  delete (entry) {
    const index = this.#entries.indexOf(entry)
    if (index === -1) return false
    this.#entries.splice(index, 1)
    // Reset when empty, so that rounding never leaves a ghost of work behind.
    this.#work = this.#entries.length === 0 ? 0 : this.#work - entry.cost
    return true
  }
}
