// A task's cancellation. Every task the pool admits gets one, so it is on the main thread's path
// once a request, in place of an AbortController, whose signal is an EventTarget on which Piscina
// adds and removes a listener (docs/benchmarks.md, "Questions answered").
import { EventEmitter } from 'node:events'

// What Piscina takes as a task's signal besides an AbortSignal: an EventEmitter with `aborted`
// and `reason`, listened to with once('abort') and removeListener. `cause` says why it was
// cancelled: 'deadline' or 'client_gone'.
export class Cancellation extends EventEmitter {
  aborted = false
  reason = undefined
  cause = undefined
  // How long after a graceful abort its listeners hear of it: the pool sets it for a task that
  // may end by itself sooner than its thread could be replaced (index.js, start()). 0: at once.
  graceMs = 0
  #late

  // The first call cancels and keeps its cause; later ones do nothing. `graceful`: the 'abort'
  // comes graceMs later, unless `settled()` comes first.
  abort (cause, graceful = false) {
    if (this.aborted) return
    this.aborted = true
    this.cause = cause
    // What AbortController.abort() rejects with.
    this.reason = new DOMException('This operation was aborted', 'AbortError')
    if (graceful && this.graceMs > 0) this.#late = setTimeout(() => this.emit('abort'), this.graceMs).unref()
    else this.emit('abort')
  }

  // The task has settled: an 'abort' still to come would cut nothing short, and does not come.
  settled () {
    clearTimeout(this.#late)
  }
}
