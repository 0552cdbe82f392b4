// Predicts a task's compute time before it runs: milliseconds = c x work, where `work` is what
// the task's input says about its size and c is learned online from measured compute times.
// It also keeps the lowest c measured: what a task computes in while the machine runs at its
// fastest, a task's size in milliseconds that a slow spell of the host does not change.

// Weight kept by the past at each new measurement: about the last ten tasks count. Measurements
// are weighted by their work, so a 70 ms task says more about c than a 0.05 ms one, whose time is
// mostly fixed overhead and timer noise.
const DECAY = 0.9
// A task's time counts up to this many times its prediction. Beyond that its thread was most
// likely stopped, not slow: by the host, or by its container's CPU quota. Learnt whole, one task
// that waited out a stop of 0.4 s made the predictions 6-7x too long for the next ten tasks or so,
// and the pool refused tasks as if they would wait over POOL_MAX_WAIT_MS behind 0.3 s of work; at
// three times, one stalled big task still did. A machine that slows down is still followed, a few
// tasks later: on a host whose speed swings, 1% of tasks took 2-2.7x their prediction.
export const MAX_TIME_PER_PREDICTION = 2

export class CostModel {
  #ms = 0
  #work = 0
  #fastest = Infinity

  // A task of `work` units took `ms` to compute.
  observe (work, ms) {
    if (!(work > 0 && ms >= 0)) return
    const predicted = this.predict(work)
    this.#ms = this.#ms * DECAY + (predicted > 0 ? Math.min(ms, MAX_TIME_PER_PREDICTION * predicted) : ms)
    this.#work = this.#work * DECAY + work
    // A task measured at 0 ms (under the timer's resolution) says nothing of the fastest rate.
    if (ms > 0) this.#fastest = Math.min(this.#fastest, ms / work)
  }

  // Milliseconds a task of `work` units is expected to compute; 0 until a measurement arrives.
  predict (work) {
    return this.#work === 0 ? 0 : work * this.#ms / this.#work
  }

  // Milliseconds a task of `work` units computes at the fastest rate measured so far; Infinity
  // until a task has taken measurable time.
  fastest (work) {
    return work * this.#fastest
  }

  // The work expected to compute in `ms`; Infinity while every task measured took no time.
  work (ms) {
    return this.#ms === 0 ? Infinity : ms * this.#work / this.#ms
  }
}
