// The sizes of the last tasks to arrive: the share of them a new task is dearer than, and their
// mean. The pool gives the dearer half of its recent tasks a later virtual deadline, in
// proportion to the mean (index.js), whatever the mix. A ring of the last `count` sizes, read in
// one pass for each: two passes over 128 numbers a task.

export class RecentSizes {
  #sizes = []
  #next = 0
  #count

  constructor (count) {
    this.#count = count
  }

  // The share of the recent tasks strictly cheaper than `size`: 0 before any came.
  cheaperThan (size) {
    let cheaper = 0
    for (const recent of this.#sizes) if (recent < size) cheaper++
    return this.#sizes.length === 0 ? 0 : cheaper / this.#sizes.length
  }

  // The mean size of the recent tasks: 0 before any came. Summed afresh each time, so that no
  // rounding builds up over a long run.
  get mean () {
    let sum = 0
    for (const recent of this.#sizes) sum += recent
    return this.#sizes.length === 0 ? 0 : sum / this.#sizes.length
  }

  // A task of `size` arrived; once `count` are kept, it takes the oldest one's place.
  add (size) {
    if (this.#sizes.length < this.#count) this.#sizes.push(size)
    else this.#sizes[this.#next] = size
    this.#next = (this.#next + 1) % this.#count
  }
}
