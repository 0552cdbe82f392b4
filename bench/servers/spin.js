// A yardstick, not a baseline: the single-thread server (fib in the handler) that also keeps its
// main thread busy for SPIN_US microseconds a request. Under wrk on the same cores, it shows what
// a given number of extra microseconds costs in throughput (bench/README.md, "Reading the results").
import { performance } from 'node:perf_hooks'
import { inline, serve } from './common.js'

const SPIN_MS = Number(process.env.SPIN_US || 0) / 1000

await serve(async (num) => {
  const end = performance.now() + SPIN_MS
  while (performance.now() < end);
  return inline(num)
})
