// A task's cancellation, and the one timer behind every task's deadline.
//
// Every task the pool admits gets both, so they are on the main thread's path once a request.
// An AbortController (whose signal is an EventTarget, on which Piscina adds and removes a
// listener) and a timer a task cost the main thread about 1% more a fib(27) request
// (docs/benchmarks.md, "Questions answered").
import { EventEmitter } from 'node:events'
import { performance } from 'node:perf_hooks'

// What Piscina takes as a task's signal besides an AbortSignal: an EventEmitter with `aborted`
// and `reason`, listened to with once('abort') and removeListener. `cause` says why it was
// cancelled: 'deadline' or 'client_gone'.
export class Cancellation extends EventEmitter {
  aborted = false
  reason = undefined
  cause = undefined

  // The first call cancels and keeps its cause; later ones do nothing.
  abort (cause) {
    if (this.aborted) return
    this.aborted = true
    this.cause = cause
    // What AbortController.abort() rejects with.
    this.reason = new DOMException('This operation was aborted', 'AbortError')
    this.emit('abort')
  }
}

// Cancels each cancellation added `timeoutMs` after it was added, unless it is deleted first.
// Every task has the same timeout, so they fall due in the order they were added: they are kept in
// that order (a Map's), and one timer, set for the first of them, serves them all.
export class Deadlines {
  #due = new Map()
  #timer
  #timeoutMs

  constructor (timeoutMs) {
    this.#timeoutMs = timeoutMs
  }

  add (cancellation) {
    this.#due.set(cancellation, performance.now() + this.#timeoutMs)
    if (this.#timer === undefined) this.#arm(this.#timeoutMs)
  }

  delete (cancellation) {
    this.#due.delete(cancellation)
    // Nothing left to time: no timer holds the process open.
    if (this.#due.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
  }

  // Cancellations added and not yet due or deleted.
  get size () {
    return this.#due.size
  }

  // Node rounds a delay down to the millisecond: rounded up here, a timer never fires before its
  // first cancellation is due, only finds, when the ones before it were deleted, a later one.
  #arm (ms) {
    this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(ms)))
  }

  #fire = () => {
    this.#timer = undefined
    const now = performance.now()
    const expired = []
    for (const [cancellation, due] of this.#due) {
      if (due > now) break
      expired.push(cancellation)
    }
    for (const cancellation of expired) this.#due.delete(cancellation)
    const next = this.#due.values().next()
    if (!next.done) this.#arm(next.value - now)
    // Last: a cancellation's listeners may add or delete others.
    for (const cancellation of expired) cancellation.abort('deadline')
  }
}
