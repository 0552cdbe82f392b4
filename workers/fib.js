// The pool's task: the naive recursive Fibonacci, kept naive on purpose as the CPU-bound workload.
import { performance } from 'node:perf_hooks'
import { threadId } from 'node:worker_threads'

// A named function expression, not a declaration: on Node 24 a function declared at the top of
// an ES module runs 5-11% slower (bench/parity.js).
const fib = function fib (n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2)
}

export default function fibTask ({ num }) {
  const started = performance.now()
  const result = fib(num)
  return { result, threadId, computeMs: performance.now() - started }
}
