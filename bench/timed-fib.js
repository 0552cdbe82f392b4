// The service's task (workers/fib.js), with when it started and ended, in ms since the epoch:
// bench/gaps.js reads a thread's idle time between two tasks from them, and how long an answer
// took to reach the main thread.
import { performance } from 'node:perf_hooks'
import fibTask from '../workers/fib.js'

export default function timedFib (input) {
  const startedAt = performance.timeOrigin + performance.now()
  const answer = fibTask(input)
  return { ...answer, startedAt, endedAt: performance.timeOrigin + performance.now() }
}
