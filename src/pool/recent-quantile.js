// A high quantile of the last values seen: the pool's target for deferring tasks (deferral.js),
// the 99th percentile of the latencies first come, first served would have given the last
// arrivals. Read at every hand-over, so computed only every `every` values, by selection on a copy
// of the kept ones: of 4,000 numbers, 13-19 us, where a sort took 250-280 us of the main thread
// (1.3 us a task at every 200).

export class RecentQuantile {
  #values
  // Where the kept values are copied to be partitioned, so that the kept order stays the arrival's.
  #scratch
  #next = 0
  #size = 0
  #since = 0
  #value = Infinity
  #quantile
  #every

  constructor (count, quantile, every) {
    this.#values = new Float64Array(count)
    this.#scratch = new Float64Array(count)
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
    const scratch = this.#scratch.subarray(0, this.#size)
    scratch.set(this.#values.subarray(0, this.#size))
    this.#value = select(scratch, Math.min(this.#size - 1, Math.floor(this.#size * this.#quantile)))
  }

  // The quantile of the kept values as last computed: Infinity until `every` values came.
  get value () {
    return this.#value
  }
}

// The value that would be at index `k` of `values` sorted ascending (Hoare's selection: partitions
// around a middle value, then goes on in the part that holds `k`). Reorders `values`.
export function select (values, k) {
  let lo = 0
  let hi = values.length - 1
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1]
    let i = lo
    let j = hi
    while (i <= j) {
      while (values[i] < pivot) i++
      while (values[j] > pivot) j--
      if (i <= j) {
        const swapped = values[i]
        values[i++] = values[j]
        values[j--] = swapped
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return values[k]
  }
  return values[k]
}
