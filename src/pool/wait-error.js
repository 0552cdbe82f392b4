// How much longer than predicted the long waits really last: a high quantile of (real wait /
// predicted wait), followed online, so that admission can promise what the pool then keeps. A
// prediction sums the compute of the work ahead at the recent rate; under a flood the tasks ahead
// compute slower than that rate now and then, the main thread hands them over late, and the error
// of the sum lands on the waits near the bound.

// Never under 1 (the bound stands as set when waits come out as predicted), never over 2, the
// most the cost model counts a task as against its prediction (cost.js).
export const MIN_FACTOR = 1
export const MAX_FACTOR = 2
// Each wait over the factor raises it by STEP x QUANTILE of itself, each other wait lowers it by
// STEP x (1 - QUANTILE): it settles where that share of the waits is under it.
const STEP = 0.1

export class WaitError {
  #factor = MIN_FACTOR
  #quantile

  constructor (quantile) {
    this.#quantile = quantile
  }

  // A task predicted to wait `predictedMs` waited `realMs`.
  observe (predictedMs, realMs) {
    if (!(predictedMs > 0 && realMs >= 0)) return
    const over = realMs / predictedMs > this.#factor
    const change = over ? 1 + STEP * this.#quantile : 1 - STEP * (1 - this.#quantile)
    this.#factor = Math.min(MAX_FACTOR, Math.max(MIN_FACTOR, this.#factor * change))
  }

  // What a predicted wait is multiplied by to be that quantile of the real one.
  get factor () {
    return this.#factor
  }
}
