// node bench/orders.js: what an order of whole tasks can give the tails, in a model, beside the
// order the pool ships. No HTTP, no threads: a simulation of 2 threads fed from one queue, tasks
// arriving evenly spaced (as the open loop's client sends them), each taking exactly its class's compute
// plus its hand-off (HAND_OFF_MS; ROUND_TRIP_MS, BEHIND_MS). Every order sees the same tasks in a
// round; each p99 is read against the first-come-first-served order's in the same round, and the
// median over the rounds printed.
// A round is 30,000 tasks, about 100 s of arrivals: with 6,000 (a 20 s window, as the open-loop
// runs) the ratios moved by up to 0.3 from one set of draws to another, more than the orders
// differ.
//
// Orders: first come, first served; the service's (a virtual deadline of arrival plus
// allowanceMs() with the default POOL_DEADLINE_FACTOR, the wait as the pool predicts it, the
// recent mix and the recent tail, and no waiting task passed once it would start past its latest
// start, latestStartMs(), and a late task giving way to one still in time, deferral.js); and
// every order that gives each class a fixed allowance, from 0 to 320 ms past the smallest's
// (cheapest first and class priorities are among them). Printed for each mix:
// the best of those under the smallest-class and biggest-class goals, and the best with neither.
//
// Loads are the threads' busy share, 0.68, 0.77 and 0.87: what 70, 80 and 90% of C offer on both
// mixes (rate x mean compute / 2 threads in docs/benchmarks.md's open-loop runs). Not 50%: there a
// small task waits mostly for a running big one to end, which no order changes (the express
// thread serves it, and is not modelled).
//
// EXTRA_MS: the CPU a task the service spends beyond the FIFO pool's (its main thread and helper
// threads, the open-loop report's CPU columns), added to each task's time on its thread under
// every order but first come, first served. With every core busy, as in a busy period where the
// tails form, that time is taken from the threads.
//
// TRACES: a directory of traces written by `npm run bench -- --suite open --trace DIR`, each an
// open-loop run's tasks as they ran: when each was sent and what it computed in on the machine
// of the moment, whose speed swings for seconds at a time. Instead of the model's tasks, the same
// orders are then given the tasks of each trace, with its arrivals and its compute times, each
// ordered by its class's median compute (what the pool predicts), at the trace's load (a share of
// C); a trace is a round. Also printed: at each load alone, the best order that keeps the class
// goals there; and for each server, its threads' busy share (its tasks' compute time over the
// threads and the trace's span) and its p99 as measured over the p99 its own order (first come,
// first served for the others) gives its trace here: what HTTP, the main thread and the
// hand-offs add to the order's p99.
//
//   node bench/orders.js                      # both mixes, 7 rounds of 30,000 tasks, about 4 min
//   LOADS=0.82,0.87,0.92 node bench/orders.js # other busy shares
//   EXTRA_MS=0.09 node bench/orders.js        # the service's orders paying 90 µs a task more
//   TRACES=/tmp/traces node bench/orders.js   # the tasks of measured runs
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_POOL_DEADLINE_FACTOR, DEFAULT_POOL_MAX_WAIT_MS } from '../src/config.js'
import { DEFER_EVERY, DEFER_WINDOW, deferByMs, nextToStart } from '../src/pool/deferral.js'
import { allowanceMs, FIB_TASK, latestStartMs, RECENT_TASKS, SECOND_SLOT_MAX_MS } from '../src/pool/index.js'
import { DeadlineQueue } from '../src/pool/queue.js'
import { RecentQuantile } from '../src/pool/recent-quantile.js'
import { RecentSizes } from '../src/pool/recent-sizes.js'
import { mixSequence } from './k6/mix.js'
import { MIXES } from './open.js'
import { median, percentile } from './stats.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS || 7)
const TASKS = Number(process.env.TASKS || 30000)
const THREADS = 2
// A thread's idle time before a task: the FIFO pool's, every task through the main thread; the
// service's through the main thread, and behind the task before it on its thread. Piscina's
// round trip is the dearer one: 3 and 1 times the FIFO pool's, in proportions measured beside
// it before the pool's threads read their tasks one at a time.
const HAND_OFF_MS = 0.1
const ROUND_TRIP_MS = 0.3
const BEHIND_MS = 0.1
const TRACES = process.env.TRACES
const LOADS = (process.env.LOADS || '0.68,0.77,0.87').split(',').map(Number)
const EXTRA_MS = Number(process.env.EXTRA_MS || 0)
if (!(EXTRA_MS >= 0)) {
  console.error(`bench: EXTRA_MS=${process.env.EXTRA_MS} is invalid: expected milliseconds, 0 or more`)
  process.exit(1)
}
// The queue's goals (bench/report.js): overall p99 against the best peer's, 1x up to 70% of C and
// 0.9x from 80%; the smallest class's against it; the biggest class's against the FIFO pool's.
const overallGoal = (load) => (load < 0.75 ? 1 : 0.9)
const SMALLEST_GOAL = 0.6
const BIGGEST_GOAL = 2
const ALLOWANCES = [0, 10, 20, 40, 80, 160, 320]
// fib(30) computes in about this on the machine of the open-loop runs; another num in proportion
// to its work (FIB_TASK.work, the pool's own measure of a task's size).
const FIB30_MS = 5.2

// The tasks of round `seed` at `load`: the open-loop runs' draw of the mix (bench/k6/mix.js), so
// every order sees the same tasks.
function tasks (classes, mix, load, seed) {
  const numAt = mixSequence(mix, seed)
  const meanMs = classes.reduce((sum, { ms, share }) => sum + ms * share, 0)
  const gapMs = meanMs / (load * THREADS)
  return Array.from({ length: TASKS }, (_, i) => {
    const num = numAt(i)
    const cls = classes.findIndex((c) => c.num === num)
    return { arrival: i * gapMs, cls, ms: classes[cls].ms, predictedMs: classes[cls].ms }
  })
}

// The traces in `dir` (open.js) that hold any task, each as the model's tasks: arrival from the
// first one sent, compute as measured, predicted compute its class's median in the trace; with
// the p99 of the latencies measured.
function readTraces (dir) {
  const traces = readdirSync(dir).filter((file) => file.endsWith('.json')).map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')))
  return traces.filter(({ tasks: rows }) => rows.length > 0).map(({ server, mix, load, tasks: rows }) => {
    const nums = mix.map(([num]) => num)
    const predicted = nums.map((num) => median(rows.filter(([, n]) => n === num).map(([, , ms]) => ms)))
    const list = rows.map(([at, num, ms]) => {
      const cls = nums.indexOf(num)
      return { arrival: at - rows[0][0], cls, ms, predictedMs: predicted[cls] }
    })
    const measuredP99 = percentile(rows.map(([, , , ms]) => ms).sort((a, b) => a - b), 0.99)
    const busy = list.reduce((sum, { ms }) => sum + ms, 0) / THREADS / (list.at(-1).arrival || 1)
    return { server, load, nums, list, measuredP99, busy }
  })
}

// Runs the tasks in the order `allowance(task, waitMs, cheaperShare, meanMs, tailMs)` gives
// (earliest arrival + allowance first), the wait predicted as the pool does: the queued work and
// the whole of each running task, as predicted, over the threads; `cheaperShare` and `meanMs`, as
// the pool's, the share of the last RECENT_TASKS arrivals predicted cheaper and their mean
// predicted compute; `tailMs`, with `defer`, the recent p99 the pool keeps. Each task holds its
// thread `extraMs` beyond its compute and hand-off. The queue is the pool's own (queue.js); with
// `latestStart(task, waitMs)`, as in the pool, a task passes no waiting task that it would push
// past that task's arrival plus its latestStart.
// With `slot`, as the service's pool does (POOL_TASKS_PER_THREAD=2), the first waiting task is
// handed to a busy thread SECOND_SLOT_MAX_MS before its task ends and follows it after
// BEHIND_MS, and a task that finds a thread idle starts after ROUND_TRIP_MS; else every task
// after HAND_OFF_MS.
// The p99 of the time from arrival to the end of compute: overall, smallest class, biggest class.
function simulate (list, allowance, biggest, extraMs, slot, latestStart, defer = false) {
  const free = new Array(THREADS).fill(0)
  const running = new Array(THREADS).fill(0)
  const queue = new DeadlineQueue()
  const recent = new RecentSizes(RECENT_TASKS)
  // Kept only for the order that defers (the service's), as the pool keeps it.
  const fifoLatencies = defer ? new RecentQuantile(DEFER_WINDOW, 0.99, DEFER_EVERY) : undefined
  const done = []
  let next = 0
  const arriveUntil = (at) => {
    while (next < list.length && list[next].arrival <= at) {
      const task = list[next++]
      const onThreads = free.reduce((sum, end, t) => sum + (end > task.arrival ? running[t] : 0), 0)
      const waitMs = (queue.work + onThreads) / THREADS
      const cheaperShare = recent.cheaperThan(task.predictedMs)
      const meanMs = recent.mean
      recent.add(task.predictedMs)
      fifoLatencies?.add(waitMs + task.predictedMs)
      const deadline = task.arrival + allowance(task, waitMs, cheaperShare, meanMs, fifoLatencies?.value)
      const stillInTime = latestStart && ((waiting, ahead) => (onThreads + ahead + task.predictedMs) / THREADS <= waiting.startBy - task.arrival)
      const startBy = task.arrival + (latestStart?.(task, waitMs) ?? Infinity)
      const deferBy = task.arrival + deferByMs(task.predictedMs, waitMs)
      queue.push({ ...task, startBy, admitted: task.arrival, costMs: task.predictedMs, deferBy }, task.predictedMs, deadline, queue.place(deadline, stillInTime))
    }
  }
  while (next < list.length || queue.size > 0) {
    const at = Math.min(...free)
    const thread = free.indexOf(at)
    // With the slot, the first task waiting SECOND_SLOT_MAX_MS before the thread frees, or else
    // the first to arrive by then, waits on it.
    arriveUntil(slot ? at - SECOND_SLOT_MAX_MS : at)
    if (queue.size === 0) arriveUntil(list[next].arrival)
    const entry = nextToStart(queue, at, fifoLatencies?.value ?? Infinity)
    queue.delete(entry)
    const task = entry.item
    const start = Math.max(at, task.arrival)
    const handOff = !slot ? HAND_OFF_MS : task.arrival < at ? BEHIND_MS : ROUND_TRIP_MS
    free[thread] = start + handOff + task.ms + extraMs
    running[thread] = task.predictedMs
    done.push([free[thread] - task.arrival, task.cls])
  }
  const p99 = (keep) => percentile(done.filter(keep).map(([ms]) => ms).sort((a, b) => a - b), 0.99)
  return [p99(() => true), p99(([, cls]) => cls === 0), p99(([, cls]) => cls === biggest)]
}

// The service's order: a virtual deadline of arrival plus allowanceMs() with the default factor,
// from the task's predicted compute, the wait the pool predicts, the recent mix and the recent
// tail; no waiting task passed past its latest start.
const serviceOrder = ({ predictedMs }, waitMs, cheaperShare, meanMs, tailMs) => allowanceMs(DEFAULT_POOL_DEADLINE_FACTOR, predictedMs, waitMs, cheaperShare, meanMs, tailMs)
const serviceLatestStart = ({ predictedMs }, waitMs) => Math.min(DEFAULT_POOL_MAX_WAIT_MS, latestStartMs(predictedMs, waitMs))

// Every order against first come, first served on `rounds` (for each of `loads`, the rounds' task
// lists) of `count` classes.
function compare (rounds, loads, count) {
  const biggest = count - 1
  const fifo = rounds.map((byRound) => byRound.map((list) => simulate(list, () => 0, biggest, 0, false)))
  // [overall, smallest, biggest] against FIFO at each load, medians of the rounds' ratios.
  const ratios = (allowance, latestStart, defer) => rounds.map((byRound, l) => {
    const runs = byRound.map((list) => simulate(list, allowance, biggest, EXTRA_MS, true, latestStart, defer))
    return [0, 1, 2].map((col) => median(runs.map((run, r) => run[col] / fifo[l][r][col])))
  })
  const fixed = []
  const combos = (n) => (n === 0 ? [[]] : combos(n - 1).flatMap((rest) => ALLOWANCES.map((a) => [...rest, a])))
  for (const extra of combos(count - 1)) {
    const allowances = [0, ...extra]
    fixed.push({ allowances, at: ratios(({ cls }) => allowances[cls]) })
  }
  const worstOverall = ({ at }) => Math.max(...at.map(([overall], l) => overall / overallGoal(loads[l])))
  const meetsClasses = ({ at }) => at.every(([, smallest, big]) => smallest <= SMALLEST_GOAL && big <= BIGGEST_GOAL)
  const best = (list) => list.sort((a, b) => worstOverall(a) - worstOverall(b))[0]
  // At each load alone, the best overall of those that keep the class goals there.
  const bestAtEachLoad = loads.map((_, l) => fixed.filter(({ at }) => at[l][1] <= SMALLEST_GOAL && at[l][2] <= BIGGEST_GOAL).sort((a, b) => a.at[l][0] - b.at[l][0])[0])
  return {
    fifoMs: fifo.map((runs) => median(runs.map(([overall]) => overall))),
    bestAtEachLoad,
    service: ratios(serviceOrder, serviceLatestStart, true),
    bestWithGoals: best(fixed.filter(meetsClasses)),
    bestOverall: best(fixed)
  }
}

// A table's first line: its label, then the loads.
const header = (label, loads) => console.log(`${label.padEnd(72)}${loads.map((l) => String(l).padEnd(20)).join('')}`)
const cells = (at) => at.map((r) => r.map((x) => x.toFixed(2)).join(' / ').padEnd(20)).join('')
function print (title, loadLabel, loads, { fifoMs, service, bestWithGoals, bestOverall, bestAtEachLoad }) {
  console.log(`\n${title}`)
  console.log(`p99 overall / smallest / biggest class, against first come first served's (its overall p99 ${fifoMs.map((ms) => ms.toFixed(0)).join(', ')} ms)${EXTRA_MS > 0 ? `; every other order's tasks hold their thread ${EXTRA_MS} ms longer` : ''}`)
  header(loadLabel, loads)
  console.log(`${'the service\'s order'.padEnd(72)}${cells(service)}`)
  const label = (text, { allowances }) => `${text} (+${allowances.join(', +')} ms)`.padEnd(72)
  if (bestWithGoals) console.log(`${label(`best, smallest <= ${SMALLEST_GOAL}x, biggest <= ${BIGGEST_GOAL}x`, bestWithGoals)}${cells(bestWithGoals.at)}`)
  else console.log(`no fixed allowances meet smallest <= ${SMALLEST_GOAL}x and biggest <= ${BIGGEST_GOAL}x at every load`)
  console.log(`${label('best overall', bestOverall)}${cells(bestOverall.at)}`)
  loads.forEach((load, l) => {
    const best = bestAtEachLoad[l]
    const text = `best at ${load} alone, its class goals there`
    console.log(best ? `${label(text, best)}${' '.repeat(20 * l)}${cells([best.at[l]])}` : `${text}: none`)
  })
}

if (TRACES === undefined) {
  for (const [name, mix] of Object.entries(MIXES)) {
    const classes = mix.map(([num, share]) => ({ num, share, ms: FIB30_MS * FIB_TASK.work({ num }) / FIB_TASK.work({ num: 30 }) }))
    const rounds = LOADS.map((load) => Array.from({ length: ROUNDS }, (_, r) => tasks(classes, mix, load, r)))
    print(`${name} mix: ${classes.map(({ num, share, ms }) => `${share * 100}% fib(${num}) ${ms.toFixed(1)} ms`).join(', ')}`, 'busy share', LOADS, compare(rounds, LOADS, classes.length))
  }
} else {
  const traces = readTraces(TRACES)
  const loads = [...new Set(traces.map(({ load }) => load))].sort((a, b) => a - b)
  const nums = traces[0]?.nums ?? []
  if (traces.length === 0 || traces.some((trace) => trace.nums.join() !== nums.join())) {
    console.error(`bench: TRACES=${TRACES} needs traces of one mix (open.js, --trace)`)
    process.exit(1)
  }
  const rounds = loads.map((load) => traces.filter((trace) => trace.load === load).map(({ list }) => list))
  print(`${traces.length} traces in ${TRACES}: fib(${nums.join('), fib(')}), their tasks as they ran`, 'load (share of C)', loads, compare(rounds, loads, nums.length))
  // For each server, medians of its traces at each load: its threads' busy share (the compute
  // time of its tasks over the threads and the trace's span), and its p99 as measured over its own
  // order's here.
  const row = (label, values) => console.log(`${label.padEnd(72)}${values.map((r) => (r === undefined ? '-' : r.toFixed(2)).padEnd(20)).join('')}`)
  const servers = [...new Set(traces.map((trace) => trace.server))]
  const byLoad = (server, value) => loads.map((load) => median(traces.filter((t) => t.server === server && t.load === load).map(value)))
  console.log()
  header('busy share of the threads', loads)
  for (const server of servers) row(server, byLoad(server, ({ busy }) => busy))
  console.log()
  header('measured p99 over the replay of its own order', loads)
  for (const server of servers) {
    // The service's second copy in the same run (run.js) keeps its order.
    const service = server === 'service' || server === 'service, again'
    const own = service ? serviceOrder : () => 0
    row(`${server}, against ${service ? 'its order' : 'first come, first served'}`, byLoad(server, ({ list, measuredP99 }) => measuredP99 / simulate(list, own, nums.length - 1, 0, service, service ? serviceLatestStart : undefined, service)[0]))
  }
}
