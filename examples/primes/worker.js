// A second task for the pool: counts the primes below `below` with a sieve of Eratosthenes.
// The example of docs/your-own-task.md, not a feature of the service.
import { performance } from 'node:perf_hooks'
import { threadId } from 'node:worker_threads'

// The pool's task interface: one input object in, { result, threadId, computeMs } out, where
// computeMs is the time the task itself took (the pool's cost model learns from it).
export default function primesTask ({ below }) {
  const started = performance.now()
  const composite = new Uint8Array(below)
  let result = 0
  for (let n = 2; n < below; n++) {
    if (composite[n] === 1) continue
    result++
    for (let multiple = n * n; multiple < below; multiple += n) composite[multiple] = 1
  }
  return { result, threadId, computeMs: performance.now() - started }
}
