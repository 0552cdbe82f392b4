// node bench/pause.js: for a cheap task that finds both threads on dear ones, the express thread
// (a third thread sharing the two cores, as the pool does) against pausing one running task while
// the cheap one computes on its thread (which a task with checkpoints would allow, and the pool's
// task has none). A model, as bench/orders.js: 2 threads, tasks arriving evenly spaced in the open
// loop's draw of each mix (bench/k6/mix.js), each taking its class's compute; the cheapest class
// waits ahead of the others, which go first come, first served among themselves. A cheap task
// takes the help only when no thread's task ends within EXPRESS_MIN_WAIT_COSTS times its compute
// (nor SECOND_SLOT_MAX_MS), as the pool's express task does; the busy share that sets the express
// thread aside in the pool is not modelled, so both kinds of help serve at every load. Each p99
// (overall, cheapest class, dearest class) is read against first come, first served's in the same
// round, and the median over the rounds printed. Pausing runs the cheap task in place of the
// running task that arrived last (the one least likely to be in the tail), or, as a check, the
// one that arrived first.
//
//   node bench/pause.js                        # both mixes, 7 rounds of 30,000 tasks, about 1 min
//   LOADS=0.5,0.6 node bench/pause.js          # other busy shares
import { EXPRESS_MIN_WAIT_COSTS, FIB_TASK, SECOND_SLOT_MAX_MS } from '../src/pool/index.js'
import { mixSequence } from './k6/mix.js'
import { MIXES } from './open.js'
import { median, percentile } from './stats.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS || 7)
const TASKS = 30000
const THREADS = 2
// Busy shares of the threads: half of C, and what 70, 80 and 90% of C offer (bench/orders.js).
const LOADS = (process.env.LOADS || '0.5,0.68,0.77,0.87').split(',').map(Number)
// fib(30)'s compute on the machine of the open-loop runs (bench/orders.js); other nums in
// proportion to their work.
const FIB30_MS = 5.2
const HELPS = ['none', 'express thread', 'pause the latest', 'pause the earliest']

function tasks (mix, load, seed) {
  const ms = mix.map(([num]) => FIB30_MS * FIB_TASK.work({ num }) / FIB_TASK.work({ num: 30 }))
  const meanMs = mix.reduce((sum, [, share], cls) => sum + ms[cls] * share, 0)
  const numAt = mixSequence(mix, seed)
  return Array.from({ length: TASKS }, (_, i) => {
    const cls = mix.findIndex(([num]) => num === numAt(i))
    return { arrival: i * meanMs / (load * THREADS), cls, left: ms[cls], end: 0 }
  })
}

// Runs `list` first come, first served (fifo) or with the cheapest class first and `help`; returns
// the p99 of the latencies: overall, cheapest class, dearest class. Tasks sharing the cores (the
// express thread's beside two others) each compute at THREADS / their count of full speed.
function simulate (list, fifo, help, biggest) {
  const threads = new Array(THREADS).fill(undefined)
  const pausedOn = Array.from({ length: THREADS }, () => [])
  const queue = []
  let express
  let now = 0
  let next = 0
  const take = () => {
    if (fifo) return queue.shift()
    const i = queue.findIndex(({ cls }) => cls === 0)
    return queue.splice(i >= 0 ? i : 0, 1)[0]
  }
  const needed = (task) => !fifo && task.cls === 0 && Math.min(...threads.map(({ left }) => left)) > Math.max(SECOND_SLOT_MAX_MS, EXPRESS_MIN_WAIT_COSTS * task.left)
  while (next < list.length || queue.length > 0 || threads.some(Boolean)) {
    const running = threads.filter(Boolean)
    if (express) running.push(express)
    const speed = Math.min(1, THREADS / running.length)
    let at = next < list.length ? list[next].arrival : Infinity
    let ending
    for (const task of running) {
      if (now + task.left / speed < at) [at, ending] = [now + task.left / speed, task]
    }
    for (const task of running) task.left -= (at - now) * speed
    now = at
    if (ending !== undefined) {
      ending.end = now
      if (ending === express) express = undefined
      else {
        const t = threads.indexOf(ending)
        threads[t] = pausedOn[t].pop() ?? take()
      }
      continue
    }
    const task = list[next++]
    const idle = threads.indexOf(undefined)
    if (idle >= 0) threads[idle] = task
    else if (help === 'express thread' && express === undefined && needed(task)) express = task
    else if (help.startsWith('pause') && needed(task) && threads.every(({ cls }) => cls !== 0)) {
      const latest = threads[0].arrival >= threads[1].arrival ? 0 : 1
      const t = help === 'pause the latest' ? latest : 1 - latest
      pausedOn[t].push(threads[t])
      threads[t] = task
    } else queue.push(task)
  }
  const p99 = (keep) => percentile(list.filter(keep).map(({ arrival, end }) => end - arrival).sort((a, b) => a - b), 0.99)
  return [p99(() => true), p99(({ cls }) => cls === 0), p99(({ cls }) => cls === biggest)]
}

const cell = (values) => values.map((x) => x.toFixed(2)).join(' / ').padEnd(22)
for (const [name, mix] of Object.entries(MIXES)) {
  console.log(`\n${name} mix, fib(${mix.map(([num]) => num).join('), fib(')}): p99 overall / cheapest / dearest class, against first come, first served's`)
  console.log(`${'busy share'.padEnd(22)}${LOADS.map((load) => String(load).padEnd(22)).join('')}`)
  const rows = HELPS.map(() => [])
  for (const load of LOADS) {
    const runs = Array.from({ length: ROUNDS }, (_, r) => {
      const fresh = () => tasks(mix, load, r)
      const fifo = simulate(fresh(), true, 'none', mix.length - 1)
      return HELPS.map((help) => simulate(fresh(), false, help, mix.length - 1).map((p, col) => p / fifo[col]))
    })
    HELPS.forEach((_, h) => rows[h].push([0, 1, 2].map((col) => median(runs.map((run) => run[h][col])))))
  }
  HELPS.forEach((help, h) => console.log(`${help.padEnd(22)}${rows[h].map(cell).join('')}`))
}
