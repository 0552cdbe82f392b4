// Piscina's load balancer, steered by the pool, and the pool's count of what each thread holds.
//
// Piscina puts at most one task that carries a signal on a thread, so a thread that finishes a
// task idles until the main thread has taken the result and handed it the next one. With
// POOL_TASKS_PER_THREAD=2 a second task may wait on a busy thread and start the moment the
// first ends (+14% throughput at fib(27) on 2 threads, bench/README.md). The price: a task
// handed over behind another cannot be overtaken any more, so only cheap tasks are (see
// SECOND_SLOT_MAX_MS in index.js), and the pool must know when a thread is idle, which is what
// `holding` counts.
export class Balancer {
  // Tasks the pool has handed to each thread (by threadId) and not yet seen settle.
  #holding = new Map()
  // Handed over while no thread was ready (a thread being replaced): Piscina holds them.
  #unplaced = 0
  // Whether the task being handed over may wait on a busy thread.
  allowBusy = false
  #chosen

  // The function Piscina calls, synchronously inside run() when a thread is ready.
  balance = (task, workers) => {
    let busyWithOne = null
    for (const worker of workers) {
      if (worker.currentUsage === 0) return this.#choose(worker)
      if (busyWithOne === null && worker.isRunningAbortableTask) busyWithOne = worker
    }
    return this.allowBusy && busyWithOne !== null ? this.#choose(busyWithOne) : null
  }

  #choose (worker) {
    this.#chosen = worker.id
    return worker
  }

  // Hands a task over with `run()` (which calls Piscina's run), and returns the thread it went
  // to, for `settled`; undefined when no thread was ready.
  place (run, allowBusy) {
    this.allowBusy = allowBusy
    this.#chosen = undefined
    const promise = run()
    const thread = this.#chosen
    if (thread === undefined) this.#unplaced++
    else this.#holding.set(thread, (this.#holding.get(thread) ?? 0) + 1)
    return { promise, thread }
  }

  // A task handed to `thread` (as `place` returned it) has settled.
  settled (thread) {
    if (thread === undefined) {
      this.#unplaced--
      return
    }
    const left = this.#holding.get(thread) - 1
    if (left === 0) this.#holding.delete(thread)
    else this.#holding.set(thread, left)
  }

  // Threads holding none of the pool's tasks, of `threads`.
  idle (threads) {
    return threads - this.#holding.size - this.#unplaced
  }
}
