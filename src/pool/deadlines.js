// The tasks' deadlines, on one timer for the pool rather than one a task. Every task's deadline is
// its admission plus the same REQUEST_TIMEOUT_MS, so tasks reach theirs in the order they were
// admitted: the timer waits for the first one still pending, expires every task past its own,
// and waits for the next. A timer a task is a setTimeout and a clearTimeout on the main thread's
// path each request, and more while requests come one at a time: Node drops its list of the
// timers of one duration once it is empty, and makes it again for the next.
// The pending items are a list linked through their entries, not a Set, whose table V8
// reallocates as it grows and shrinks with the requests in flight: at fib(27) on 4 connections
// the service moved 612-897 bytes a request into the old space with a Set and 337-451 with the
// list (bench/promotion.js, BENCH_NUM=27, three runs each).
import { performance } from 'node:perf_hooks'

export class Deadlines {
  // Pending items in the order of their deadlines, the first and the last of a list of
  // { item, at, prev, next }.
  #first = null
  #last = null
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
    const entry = { item, at: performance.now() + this.#ms, prev: this.#last, next: null }
    if (this.#last === null) this.#first = entry
    else this.#last.next = entry
    this.#last = entry
    if (this.#timer === undefined) this.#wait(entry.at)
    return entry
  }

  // The entry's item settled before its deadline. Once is enough: an entry no longer pending
  // (deleted, or expired) is left as it is.
  delete (entry) {
    if (entry.prev === null && this.#first !== entry) return
    if (entry.prev === null) this.#first = entry.next
    else entry.prev.next = entry.next
    if (entry.next === null) this.#last = entry.prev
    else entry.next.prev = entry.prev
    // Nothing left pointing from a settled entry at the ones still pending.
    entry.prev = entry.next = null
  }

  // No timer left behind: the pool is closing. Every entry leaves the list.
  close () {
    clearTimeout(this.#timer)
    this.#timer = undefined
    while (this.#first !== null) this.delete(this.#first)
  }

  #wait (at) {
    // Not keeping the process alive: a pending item is a request in flight, which does.
    this.#timer = setTimeout(this.#due, Math.max(0, at - performance.now())).unref()
  }

  #due = () => {
    this.#timer = undefined
    const now = performance.now()
    for (let entry = this.#first; entry !== null; entry = this.#first) {
      if (entry.at > now) return this.#wait(entry.at)
      this.delete(entry)
      this.#expire(entry.item)
    }
  }
}
