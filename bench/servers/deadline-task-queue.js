// Piscina's TaskQueue interface (its `taskQueue` option) over the service's queue
// (src/pool/queue.js): the order of virtual deadline inside Piscina, for the benchmarks that
// measure that place for it. A task's deadline and size come in its queue options
// (`Piscina.queueOptionsSymbol`); tasks are known by their input object.
import { Piscina } from 'piscina'
import { DeadlineQueue } from '../../src/pool/queue.js'

export class PiscinaDeadlineQueue {
  #queue = new DeadlineQueue()
  #entries = new Map()
  get size () { return this.#queue.size }
  // Size of every waiting task.
  get work () { return this.#queue.work }

  push (task) {
    const { deadline, work } = task[Piscina.queueOptionsSymbol]
    this.#entries.set(task.task, { task, entry: this.#queue.push(task, work, deadline) })
  }

  // The task with the earliest deadline leaves the queue; null when none waits.
  shift () {
    const [first] = this.#queue
    if (first === undefined) return null
    this.#queue.delete(first)
    this.#entries.delete(first.item.task)
    return first.item
  }

  remove (task) {
    this.cancel(task.task)
  }

  // The queued task of `input` leaves the queue: true if it was still there.
  cancel (input) {
    const queued = this.#entries.get(input)
    if (queued === undefined) return false
    this.#queue.delete(queued.entry)
    this.#entries.delete(input)
    return true
  }
}
