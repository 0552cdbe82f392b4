// node bench/gaps.js: where the queue of waiting tasks should live, measured by the idle gap a
// thread has between two tasks when work is waiting. Two designs, each ordering tasks by virtual
// deadline with the service's own queue (src/pool/queue.js):
//   in front:  the service's pool (src/pool/index.js): Piscina is handed a task only when a
//              thread can take it; a thread's result comes back to the main thread, and the pool
//              hands the next task over from there. Every task carries its cancellation (here a
//              request that never closes).
//   inside:    Piscina's own `taskQueue` option, ordered by the same queue, Piscina handing the
//              next task to the freed thread in its completion callback. Tasks carry no signal:
//              Piscina 5.3 puts a task with a signal that finds no free thread in a queue of its
//              own, ahead of the taskQueue (piscinajs/piscina issue 899), which undoes the order;
//              so a running task could not be cancelled in this design.
// A burst of TASKS small tasks on one thread; the gap is the burst's time less the compute each
// task measured in its thread, over the tasks. Rounds alternate the designs.
//
// Then the service's hand-off to a busy thread: its pool on 2 threads (no express thread) with
// POOL_TASKS_PER_THREAD 1, where every task comes through the main thread, and 2, where the first
// waiting task may wait on a thread near the end of its task. A burst of MIX_TASKS of the default
// mix; the gap is each thread's time between the end of a task and the start of its next, read
// on the thread (bench/timed-fib.js), over the tasks; beside it, the share of answers the main
// thread saw only after the next task on their thread had ended, and the share it saw over 1 ms
// after their end. Rounds alternate. NICE sets the threads' nice increment there.
//
//   node bench/gaps.js     # 5 rounds of 2,000 fib(20), then of 400 of the mix, about 40 s
import { EventEmitter } from 'node:events'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { Piscina } from 'piscina'
import pool, { FIB_TASK } from '../src/pool/index.js'
import { mixSequence } from './k6/mix.js'
import { MIXES } from './open.js'
import { PiscinaDeadlineQueue } from './servers/deadline-task-queue.js'
import { median } from './stats.js'

const TASKS = Number(process.env.TASKS || 2000)
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5)
const NUM = 20
const MIX_TASKS = Number(process.env.MIX_TASKS || 400)
// An answer seen this long after its task ended waited for the main thread.
const LATE_MS = 1
// The worker threads' nice increment in the hand-off's pools (POOL_THREAD_NICE).
const NICE = Number(process.env.NICE || 0)

const front = Fastify({ logger: false })
front.register(pool, { threads: 1, maxQueue: 1e6, maxWaitMs: 1e9, deadlineFactor: 12, tasksPerThread: 1, expressMaxMs: 0, nice: 0, timeoutMs: 1e9 })
await front.ready()
const inside = new Piscina({ filename: FIB_TASK.file, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, taskQueue: new PiscinaDeadlineQueue(), recordTiming: false })

const DESIGNS = {
  'in front': () => front.pool.run({ num: NUM }, new EventEmitter()),
  inside: (i) => inside.run({ num: NUM, [Piscina.queueOptionsSymbol]: { deadline: i, work: FIB_TASK.work({ num: NUM }) } })
}

async function burst (run) {
  const started = performance.now()
  const results = await Promise.all(Array.from({ length: TASKS }, (_, i) => run(i)))
  const wallMs = performance.now() - started
  const computeMs = results.reduce((sum, r) => sum + r.computeMs, 0)
  return (wallMs - computeMs) * 1000 / TASKS
}

// Runs each of `runs` (name => round => its idle gap a task, µs) once to warm up, then ROUNDS
// times, the order reversed every other round; prints each one's median.
async function alternate (runs, label) {
  const names = Object.keys(runs)
  for (const name of names) await runs[name](ROUNDS)
  const gaps = Object.fromEntries(names.map((name) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 1 ? [...names].reverse() : names) gaps[name].push(await runs[name](round))
  }
  const width = Math.max(...names.map((name) => name.length))
  for (const [name, values] of Object.entries(gaps)) {
    console.log(`${label}${name.padEnd(width)}  idle gap between tasks: median ${median(values).toFixed(1)} us (rounds ${values.map((v) => v.toFixed(1)).join(', ')})`)
  }
}

await alternate(Object.fromEntries(Object.entries(DESIGNS).map(([name, run]) => [name, () => burst(run)])), '')
await front.close()
await inside.destroy()

const TIMED_TASK = { ...FIB_TASK, file: fileURLToPath(new URL('./timed-fib.js', import.meta.url)) }
const handOffs = {}
for (const tasksPerThread of [1, 2]) {
  const app = Fastify({ logger: false })
  app.register(pool, { threads: 2, maxQueue: 1e6, maxWaitMs: 1e9, deadlineFactor: 12, tasksPerThread, expressMaxMs: 0, nice: NICE, timeoutMs: 1e9, task: TIMED_TASK })
  await app.ready()
  handOffs[`${tasksPerThread} task${tasksPerThread > 1 ? 's' : ''} a thread`] = app
}

// A burst of the mix (the round's draw): each thread's idle time between its tasks, over them;
// the share of answers the main thread saw only after the next task on their thread had ended
// (held back by a whole task); and the share it saw more than LATE_MS after they ended, of those
// that ended once every task had been handed to the pool.
async function mixBurst (app, round) {
  const numAt = mixSequence(MIXES.default, round)
  const answers = Array.from({ length: MIX_TASKS }, (_, i) => app.pool.run({ num: numAt(i) }, new EventEmitter())
    .then((r) => ({ ...r, seenAt: performance.timeOrigin + performance.now() })))
  const handedAt = performance.timeOrigin + performance.now()
  const results = await Promise.all(answers)
  const settled = results.filter((r) => r.endedAt > handedAt)
  const late = settled.filter((r) => r.seenAt - r.endedAt > LATE_MS).length / settled.length
  let idleMs = 0
  let count = 0
  let held = 0
  for (const threadId of new Set(results.map((r) => r.threadId))) {
    const ran = results.filter((r) => r.threadId === threadId).sort((a, b) => a.startedAt - b.startedAt)
    for (let i = 1; i < ran.length; i++) {
      idleMs += ran[i].startedAt - ran[i - 1].endedAt
      if (ran[i - 1].seenAt > ran[i].endedAt) held++
    }
    count += ran.length - 1
  }
  return { idleUs: idleMs * 1000 / count, held: held / count, late }
}

const bursts = Object.fromEntries(Object.keys(handOffs).map((name) => [name, []]))
await alternate(Object.fromEntries(Object.entries(handOffs).map(([name, app]) => [name, async (round) => {
  const burst = await mixBurst(app, round)
  bursts[name].push(burst)
  return burst.idleUs
}])), 'default mix, ')
// The shares over the rounds, the warm-up's left out.
const shares = (name, read) => {
  const values = bursts[name].slice(1).map(read)
  return `median ${(median(values) * 100).toFixed(1)}% (rounds ${values.map((s) => `${(s * 100).toFixed(1)}%`).join(', ')})`
}
for (const name of Object.keys(bursts)) {
  console.log(`default mix, ${name}: answers held back by the thread's next task ${shares(name, (b) => b.held)}; seen over ${LATE_MS} ms after their end ${shares(name, (b) => b.late)}`)
}
for (const app of Object.values(handOffs)) await app.close()
