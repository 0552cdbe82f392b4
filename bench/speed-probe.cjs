// One CPU's speed, for bench/speed.js: run pinned to that CPU (taskset), it times fib(PROBE_NUM)
// every `argv[2]` ms and prints `<epoch ms> <ms>` for each timing the scheduler did not
// interrupt (its run count in /proc/thread-self/schedstat unchanged), so the figure is the CPU's
// speed, not the load on it. Exits when its parent closes either pipe.
const { readFileSync } = require('node:fs')
const { performance } = require('node:perf_hooks')
const fib = require('./fib.cjs')

const PROBE_NUM = 22
const EVERY_MS = Number(process.argv[2])

const runs = () => readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[2]
for (let i = 0; i < 300; i++) fib(20)

setInterval(() => {
  const before = runs()
  const started = performance.now()
  fib(PROBE_NUM)
  const ms = performance.now() - started
  if (runs() === before) process.stdout.write(`${(performance.timeOrigin + started).toFixed(1)} ${ms.toFixed(4)}\n`)
}, EVERY_MS)
process.stdin.on('end', () => process.exit(0)).resume()
// A parent that exits closes both pipes, and a timing may be written before the end of stdin is
// read: the closed pipe (EPIPE) is the same end.
process.stdout.on('error', () => process.exit(0))
