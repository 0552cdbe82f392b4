// Piscina's load balancer, steered by the pool, and the pool's count of what each thread holds.
//
// Piscina puts at most one task that carries a signal on a thread, so a thread that finishes a
// task idles until the main thread has taken the result and handed it the next one. With
// POOL_TASKS_PER_THREAD=2 a second task may wait on a busy thread and start the moment the
// first ends (fib(27) at concurrency 4: 0.91-0.95x the cluster's throughput against 0.84-0.88x
// in six runs, bench/ladder.js). The price: a task handed over behind another cannot
// be overtaken any more, nor move to a thread that frees up sooner. So a task waits on a busy
// thread only behind a task sure to end soon (SECOND_SLOT_MAX_MS in index.js); the pool must know
// when each thread is idle and when its work is predicted to end, which is what `holding` and
// `ends` keep.
import { performance } from 'node:perf_hooks'

// Idle, or running exactly one task, with a signal (Piscina counts it as Infinity) or without (a
// task that waited behind another and now runs): never behind two.
const mayTakeOneMore = (worker) => worker.currentUsage === 0 || worker.isRunningAbortableTask || worker.currentUsage === 1

export class Balancer {
  // The tasks the pool has handed to each thread (by threadId) and not yet seen settle, as their
  // predicted compute, in the order handed over: the first runs.
  #holding = new Map()
  // When the tasks handed to each thread are predicted to be done (ms, on `now`'s clock).
  #ends = new Map()
  // What to call once the task each thread runs has settled (afterCurrent).
  #after = new Map()
  // Handed over while no thread was ready (a thread being replaced): Piscina holds them.
  #unplaced = 0
  // The busy thread the task being handed over may wait on, if any.
  #behind
  #chosen
  #now

  constructor ({ now = () => performance.now() } = {}) {
    this.#now = now
  }

  // The function Piscina calls, synchronously inside run() when a thread is ready. A task placed
  // behind a busy thread goes there and nowhere else, even while another thread is idle: with the
  // express thread one is idle most of the time, kept for the tasks index.js sends there.
  balance = (task, workers) => {
    for (const worker of workers) {
      if (this.#behind === undefined ? worker.currentUsage === 0 : worker.id === this.#behind && mayTakeOneMore(worker)) return this.#choose(worker)
    }
    return null
  }

  #choose (worker) {
    this.#chosen = worker.id
    return worker
  }

  // When `thread` may take a task behind the one task it holds (Infinity while it holds none, or
  // two): once that task is predicted to end within `withinMs`, and would end within twice that at
  // half its predicted speed (its predicted end plus its cost). The second bound holds back only
  // tasks dearer than `withinMs`: behind a cheap one the hand-over saves a round trip between tasks
  // of a few milliseconds; behind a dear one a wrong prediction costs far more. On a host whose
  // speed swings from one second to the next, a task's compute time reached 1.3-1.4x its prediction
  // at the 90th percentile and 1.9-2.7x at the 99th; with the first bound alone, 15-26% of the
  // tasks handed over waited over 10 ms there (docs/design.md, "The pool").
  #opensAt (thread, withinMs) {
    const held = this.#holding.get(thread)
    return held?.length === 1 ? this.#ends.get(thread) - withinMs + Math.max(0, held[0] - withinMs) : Infinity
  }

  // The busy thread that may take a task behind its own at `now` (#opensAt), the one whose work is
  // predicted to end first; undefined if none may. Never `except`.
  endingBy (now, withinMs = 0, except = undefined) {
    let soonest
    for (const thread of this.#holding.keys()) {
      if (thread === except) continue
      const opens = this.#opensAt(thread, withinMs)
      if (opens <= now && (soonest === undefined || this.#ends.get(thread) < this.#ends.get(soonest))) soonest = thread
    }
    return soonest
  }

  // The soonest time at which a busy thread other than `except` may take a task behind its own
  // (#opensAt).
  opensAt (withinMs, except = undefined) {
    let soonest = Infinity
    for (const thread of this.#holding.keys()) if (thread !== except) soonest = Math.min(soonest, this.#opensAt(thread, withinMs))
    return soonest
  }

  // When the first busy thread's work is predicted to end (Infinity when none is busy).
  soonestEnd () {
    let soonest = Infinity
    for (const end of this.#ends.values()) soonest = Math.min(soonest, end)
    return soonest
  }

  // Hands a task predicted to compute `costMs` over with `run()` (which calls Piscina's run): to
  // an idle thread, or else, given `behind` (from endingBy), behind that thread's task. Returns
  // the thread it went to, for `settled`; undefined when no thread was ready.
  place (run, costMs, behind) {
    this.#behind = behind
    this.#chosen = undefined
    const promise = run()
    // A task Piscina keeps for later goes to an idle thread only.
    this.#behind = undefined
    const thread = this.#chosen
    if (thread === undefined) {
      this.#unplaced++
    } else {
      const now = this.#now()
      const held = this.#holding.get(thread)
      if (held === undefined) this.#holding.set(thread, [costMs])
      else held.push(costMs)
      this.#ends.set(thread, Math.max(now, this.#ends.get(thread) ?? now) + costMs)
    }
    return { promise, thread }
  }

  // A task handed to `thread` (as `place` returned it) has settled.
  settled (thread) {
    if (thread === undefined) {
      this.#unplaced--
      return
    }
    const held = this.#holding.get(thread)
    held.shift()
    if (held.length === 0) {
      this.#holding.delete(thread)
      this.#ends.delete(thread)
    }
    const after = this.#after.get(thread)
    if (after === undefined) return
    this.#after.delete(thread)
    for (const fn of after) fn()
  }

  // Calls `fn` once the task `thread` runs now has settled: at once if it runs none.
  afterCurrent (thread, fn) {
    if (!this.#holding.has(thread)) return fn()
    const after = this.#after.get(thread)
    if (after === undefined) this.#after.set(thread, [fn])
    else after.push(fn)
  }

  // Whether `thread` holds any of the pool's tasks.
  holds (thread) {
    return this.#holding.has(thread)
  }

  // Threads holding at least one of the pool's tasks: each runs one.
  get running () {
    return this.#holding.size
  }

  // Threads holding none of the pool's tasks, of `threads`.
  idle (threads) {
    return threads - this.#holding.size - this.#unplaced
  }
}
