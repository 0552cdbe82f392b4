// node bench/parity.js: the pool's task (workers/fib.js on a Piscina thread, as the service runs
// it) against the fastest form of the same computation (bench/fib.cjs in a plain worker thread).
// The two threads take turns, one task at a time, so both see the same core at the same moment;
// each task's compute time is measured inside its thread. Exits 1 when the task is more than
// 2% slower. TASK=path times another task module in the pool's place (a check of the check).
//
//   node bench/parity.js            # fib(30), 5 rounds of 40 turns, about 15 s
import { once } from 'node:events'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { median } from './stats.js'

const NUM = Number(process.env.NUM || 30)
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5)
const TURNS = Number(process.env.TURNS || 40)
const WARM_UP = 20
const TOLERANCE = 0.02
const TASK = process.env.TASK ? resolve(process.env.TASK) : fileURLToPath(new URL('../workers/fib.js', import.meta.url))
const FASTEST = fileURLToPath(new URL('./fib.cjs', import.meta.url))

const pool = new Piscina({ filename: TASK, minThreads: 1, maxThreads: 1, idleTimeout: Infinity })
const plain = new Worker(`
  const { parentPort } = require('node:worker_threads')
  const { performance } = require('node:perf_hooks')
  const fib = require(${JSON.stringify(FASTEST)})
  parentPort.on('message', (num) => {
    const started = performance.now()
    fib(num)
    parentPort.postMessage(performance.now() - started)
  })`, { eval: true })

const timePool = async () => (await pool.run({ num: NUM })).computeMs
const timePlain = async () => {
  plain.postMessage(NUM)
  const [ms] = await once(plain, 'message')
  return ms
}

for (let i = 0; i < WARM_UP; i++) {
  await timePool()
  await timePlain()
}
// Each turn's ratio compares two tasks run one right after the other, so that a drift of the
// core's speed over the run (a third, some hours) cancels out; a round reads their median.
const ratios = []
for (let round = 1; round <= ROUNDS; round++) {
  const task = []
  const fastest = []
  for (let i = 0; i < TURNS; i++) {
    // Alternate who goes first, so that neither always follows the other.
    if (i % 2 === 0) {
      task.push(await timePool())
      fastest.push(await timePlain())
    } else {
      fastest.push(await timePlain())
      task.push(await timePool())
    }
  }
  const ratio = median(task.map((ms, i) => ms / fastest[i]))
  ratios.push(ratio)
  console.log(`round ${round}: fib(${NUM}) the pool's task ${median(task).toFixed(3)} ms, the fastest form ${median(fastest).toFixed(3)} ms, ratio ${ratio.toFixed(3)}`)
}
const ratio = median(ratios)
const met = ratio <= 1 + TOLERANCE
console.log(`parity: the pool's task takes ${ratio.toFixed(3)}x the fastest form's time (median of ${ROUNDS} rounds; goal <= ${1 + TOLERANCE}): ${met ? 'met' : 'missed'}`)
await pool.destroy()
await plain.terminate()
process.exit(met ? 0 : 1)
