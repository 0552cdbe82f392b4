// The sizes of the last tasks to arrive: the share of them a new task is dearer than, and their
// mean. The pool gives the dearer half of its recent tasks a later virtual deadline, in
// proportion to the mean (index.js), whatever the mix. A ring of the last `count` sizes, read in
// one pass for each: two passes over 128 numbers a task. The passes go by index over a typed
// array: `for...of` over an array of them boxed every number it read, 4 KB of garbage a task on
// the main thread, and took 0.51 us a task against 0.13.

export class RecentSizes {
  #sizes
  #kept = 0
  #next = 0

  constructor (count) {
    this.#sizes = new Float64Array(count)
  }

  // The share of the recent tasks strictly cheaper than `size`: 0 before any came.
  cheaperThan (size) {
    const sizes = this.#sizes
    let cheaper = 0
    for (let i = 0; i < this.#kept; i++) if (sizes[i] < size) cheaper++
    return this.#kept === 0 ? 0 : cheaper / this.#kept
  }

  // The mean size of the recent tasks: 0 before any came. Summed afresh each time, so that no
  // rounding builds up over a long run.
  get mean () {
    const sizes = this.#sizes
    let sum = 0
    for (let i = 0; i < this.#kept; i++) sum += sizes[i]
    return this.#kept === 0 ? 0 : sum / this.#kept
  }

  // A task of `size` arrived; once `count` are kept, it takes the oldest one's place.
  add (size) {
    this.#sizes[this.#next] = size
    this.#next = (this.#next + 1) % this.#sizes.length
    this.#kept = Math.min(this.#kept + 1, this.#sizes.length)
  }
}
