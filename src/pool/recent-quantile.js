// A high quantile of the last values seen: the pool's target for deferring tasks (deferral.js),
// the 99th percentile of the latencies first come, first served would have given the last
// arrivals. Read at every hand-over, so computed only every `every` values: a sort of a copy of
// the kept ones (4,000 numbers, a fraction of a millisecond, every 200 tasks).

export class RecentQuantile {
  #values
  #next = 0
  #size = 0
  #since = 0
  #value = Infinity
  #quantile
  #every

  constructor (count, quantile, every) {
    this.#values = new Float64Array(count)
    this.#quantile = quantile
    this.#every = every
  }

  // Keeps `value`; once `count` are kept, in the oldest one's place.
  add (value) {
    this.#values[this.#next] = value
    this.#next = (this.#next + 1) % this.#values.length
    this.#size = Math.min(this.#size + 1, this.#values.length)
    if (++this.#since < this.#every) return
    this.#since = 0
    const sorted = this.#values.slice(0, this.#size).sort()
    this.#value = sorted[Math.min(this.#size - 1, Math.floor(this.#size * this.#quantile))]
  }

  // The quantile of the kept values as last computed: Infinity until `every` values came.
  get value () {
    return this.#value
  }
}
