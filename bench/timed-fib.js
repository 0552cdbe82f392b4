// The service's task (workers/fib.js), with when it started and ended on its thread's clock:
// bench/gaps.js reads a thread's idle time between two tasks from them.
import { performance } from 'node:perf_hooks'
import fibTask from '../workers/fib.js'

export default function timedFib (input) {
  const startedAt = performance.now()
  const answer = fibTask(input)
  return { ...answer, startedAt, endedAt: performance.now() }
}
