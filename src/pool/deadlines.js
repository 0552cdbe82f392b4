// The tasks' deadlines, on one timer for the pool rather than one a task. Every task's deadline is
// its admission plus the same REQUEST_TIMEOUT_MS, so tasks reach theirs in the order they were
// admitted: the timer waits for the first one still pending, expires every task past its own,
// and waits for the next. A timer a task is a setTimeout and a clearTimeout on the main thread's
// path each request, and more while requests come one at a time: Node drops its list of the
// timers of one duration once it is empty, and makes it again for the next.
import { performance } from 'node:perf_hooks'

export class Deadlines {
  // Pending items in the order of their deadlines: { item, at }.
  #pending = new Set()
  #timer
  #ms
  #expire

  // `expire(item)` is called for each item still pending `ms` after it was added.
  constructor (ms, expire) {
    this.#ms = ms
    this.#expire = expire
  }

  // Adds `item`; returns its entry, for `delete`.
  add (item) {
    const entry = { item, at: performance.now() + this.#ms }
    this.#pending.add(entry)
    if (this.#timer === undefined) this.#wait(entry.at)
    return entry
  }

  // The entry's item settled before its deadline.
  delete (entry) {
    this.#pending.delete(entry)
  }

  // No timer left behind: the pool is closing.
  close () {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#pending.clear()
  }

  #wait (at) {
    // Not keeping the process alive: a pending item is a request in flight, which does.
    this.#timer = setTimeout(this.#due, Math.max(0, at - performance.now())).unref()
  }

  #due = () => {
    this.#timer = undefined
    const now = performance.now()
    for (const entry of this.#pending) {
      if (entry.at > now) return this.#wait(entry.at)
      this.#pending.delete(entry)
      this.#expire(entry.item)
    }
  }
}
