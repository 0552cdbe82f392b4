// The sizes of the last tasks to arrive, for the share of them a new task is dearer than: the pool
// gives the dearer half of its recent tasks a later virtual deadline (index.js), whatever the mix.
// A ring of the last `count` sizes, read in one pass a task (under a microsecond for 128).

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

  // A task of `size` arrived; once `count` are kept, it takes the oldest one's place.
  add (size) {
    if (this.#sizes.length < this.#count) this.#sizes.push(size)
    else this.#sizes[this.#next] = size
    this.#next = (this.#next + 1) % this.#count
  }
}
