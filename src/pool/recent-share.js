// The share of the recent time that a condition held, as an exponentially weighted average over
// time: a moment `ageMs` ago weighs exp(-ageMs / timeConstantMs). The pool keeps one for "every
// thread is busy", so that the express thread steps aside while the threads are saturated.
import { performance } from 'node:perf_hooks'

export class RecentShare {
  #share = 0
  #holds = false
  #since
  #timeConstantMs
  #now

  constructor (timeConstantMs, { now = () => performance.now() } = {}) {
    this.#timeConstantMs = timeConstantMs
    this.#now = now
    this.#since = now()
  }

  // The condition holds (true) or not from now on.
  set (holds) {
    this.#advance()
    this.#holds = holds
  }

  // Between 0 (never held lately) and 1 (held all along).
  get value () {
    this.#advance()
    return this.#share
  }

  #advance () {
    const now = this.#now()
    const kept = Math.exp(-(now - this.#since) / this.#timeConstantMs)
    this.#share = this.#share * kept + (this.#holds ? 1 - kept : 0)
    this.#since = now
  }
}
