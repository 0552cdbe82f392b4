// The pool plugin: Piscina's threads, started once and kept warm, fed from the service's own
// queue in order of virtual deadline (queue.js, cost.js); every task under a deadline; closed
// with the app.
// It reports what happens to tasks as events (`app.pool.events`) for the metrics to count.
// Longer than the 200 lines the other files keep to: admission, hand-off, retry and settlement
// share one state (the queue, the count of started tasks and their work), read best in one place;
// what needs no state of the pool lives beside it (queue.js, cost.js, balancer.js).
import { EventEmitter } from 'node:events'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import fp from 'fastify-plugin'
import { Piscina } from 'piscina'
import { DeadlineExceeded, OverDeadline, QueueFull, QueueWait } from '../errors.js'
import { Alarm } from './alarm.js'
import { Balancer } from './balancer.js'
import { Cancellation } from './cancellation.js'
import { CostModel } from './cost.js'
import { Deadlines } from './deadlines.js'
import { DEFER_EVERY, DEFER_WINDOW, deferByMs, nextToStart } from './deferral.js'
import { DeadlineQueue } from './queue.js'
import { RecentQuantile } from './recent-quantile.js'
import { RecentShare } from './recent-share.js'
import { RecentSizes } from './recent-sizes.js'
import { keepTaskRecordsYoung, piscinaTaskModules } from './task-records.js'
import { keepTaskTables } from './task-tables.js'
import { keepThreadViews, piscinaWorkerInfo } from './thread-views.js'
import { WaitError } from './wait-error.js'

// Once for the process: every pool's threads get one view each (thread-views.js), and a table of
// their tasks that keeps none of them from the scavenger (task-tables.js); and every task a record
// whose functions are born young, not in the old space (task-records.js).
const WorkerInfo = piscinaWorkerInfo()
keepThreadViews(WorkerInfo)
keepTaskTables(WorkerInfo)
keepTaskRecordsYoung(piscinaTaskModules())

const PHI = (1 + Math.sqrt(5)) / 2

// The task this service runs: its worker, the size of an input (the naive fib makes about
// PHI^num calls), and an input measured on every thread at start to calibrate the cost model
// (fib(25): about half a millisecond).
export const FIB_TASK = {
  file: fileURLToPath(new URL('../../workers/fib.js', import.meta.url)),
  work: ({ num }) => PHI ** num,
  calibration: { num: 25 }
}

// Calibration runs the input this many times on every thread; each thread's fastest run counts.
export const CALIBRATION_ROUNDS = 5
// With POOL_TASKS_PER_THREAD=2, the most the task running on a busy thread may be predicted to have
// left, and half the most it may have left at half its predicted speed (balancer.js), for the next
// task to be handed to that thread. Waiting there, the next task starts without the round trip
// through the main thread (0.1-0.3 ms); handed over earlier, it would hold back every cheaper task
// that arrives meanwhile, or wait for its thread while others free up (behind a fib(35), the whole
// 90 ms of it).
export const SECOND_SLOT_MAX_MS = 5
// A task predicted to compute SECOND_SLOT_MAX_MS or less whose client goes away while it runs is
// let run on this long before its thread is terminated: Piscina cancels a running task only by
// terminating its thread, and a new thread took 32-47 ms of CPU to start (docs/benchmarks.md,
// "Questions answered"), the compute of dozens of such tasks. One still running by then ran 4
// times its prediction or more: a runaway, or a stop of its host, which the thread is not kept for.
export const CANCEL_GRACE_MS = 20
// A waiting task's virtual deadline is its arrival plus an allowance: POOL_DEADLINE_FACTOR times
// its predicted compute, but no more than that compute plus ALLOWANCE_WAITS times the wait
// predicted as it arrives. Cheap tasks overtake dear ones at every load, while a dear task's extra
// delay stays in proportion to the wait a first-come-first-served pool would give it. Capped at the
// wait alone, a 20 ms task got the allowance of a 90 ms one once the wait passed 100 ms: both
// absorbed every burst. 1.5 waits with a factor of 6, against one wait with 12: on the tasks of
// measured runs, the overall p99 at 80 and 90% of C went from 0.92x and 1.04x first come, first
// served's to 0.85x and 0.88x on the default mix, the smallest and biggest classes within their
// goals there, and stayed within 0.04 of it on the big; the factor of 4 since, under the same cap,
// took the default mix's overall p99 at 80% lower again (docs/design.md, "What the queue was
// measured against").
const ALLOWANCE_WAITS = 1.5
// A task dearer than at least half of the last RECENT_TASKS to arrive (`cheaperShare`, the share of
// them cheaper than it) is given POOL_DEADLINE_FACTOR times their mean predicted compute
// (`meanCostMs`) more: the cheaper half of the mix, whatever its sizes, passes the dearer tasks
// that came up to that much earlier (about 20 ms on either mix). The factor alone had a fib(26)
// pass only the fib(30)s of the 18 ms before it (their 21 ms allowance against its 3 ms), where at
// 90% of C waits run to hundreds of ms and the big mix's fib(30)s are a fifth of its tasks. On
// the tasks of ten open-loop runs (220 traces of the big mix, 136 of the default), the smallest
// class's p99 at 90% of C read 0.52x first come, first served's against 0.60x without the lead on
// the big mix and 0.57x against 0.64x on the default, the overall p99 0.87x against 0.86x and
// 0.86x against 0.82x; at 50-80% no ratio rose by more than 0.02. A fixed 20 ms read 0.84x overall
// on the default mix at 90% and the same elsewhere within 0.02, but would shrink against the tasks
// of a slower machine, or of a task that computes for seconds (docs/design.md, "What the queue was
// measured against").
export const RECENT_TASKS = 128
// The whole allowance is at most ALLOWANCE_TAIL_SHARE of what the recent tail leaves past the
// task's compute: the tail is the p99 of the latencies first come, first served would have given
// the last arrivals (`tailMs`, deferral.js). Where that tail is a few times the biggest task's
// compute, it is made of the big tasks' own waits, and every ms a big task is overtaken adds to it;
// where bursts make it, it is long, and so is the cap. With deferral's bound then at 1.7
// (deferral.js), on the 20 traces of the big mix's report run at 90% of C (bench/orders.js), first
// come, first served's p99 was 3.9-4.9 times fib(34)'s compute on 12: there the order read
// 0.95-1.31x its p99 without the cap and 0.70-0.86x with it. Over every load of six sets of traces
// (both mixes: the runs of 2026-11-30 and two report runs), the overall p99 read within 0.02 of the
// uncapped order's or lower, down to 0.79x against 0.98x at 90% of C and 1.05x against 1.26x at 95%
// on the big mix; the smallest class's at most 0.09 higher up to 90% (fib(28) 0.82x against 0.73x
// at half of C on the default mix). 0.35 gave 0.01-0.03 lower overall and the smallest class up to
// 0.58x at 80% on the default mix; 0.7 and 1 read up to 0.83x and 0.95x at 90% on the big mix.
const ALLOWANCE_TAIL_SHARE = 0.5
export const allowanceMs = (factor, costMs, waitMs, cheaperShare, meanCostMs, tailMs = Infinity) => Math.min(
  Math.min(factor * costMs, costMs + ALLOWANCE_WAITS * waitMs) + (cheaperShare >= 0.5 ? factor * meanCostMs : 0),
  ALLOWANCE_TAIL_SHARE * Math.max(0, tailMs - costMs)
)
// However many tasks come with earlier deadlines, a waiting task is overtaken only while it is
// still predicted to start within POOL_MAX_WAIT_MS of its admission (what it was admitted under),
// and in time to be answered within LATENCY_BOUND times the latency first come, first served
// would have given it: the wait predicted as it came plus its compute. The allowance alone let a
// burst of cheap tasks pass a dear one for as long as the burst lasted. On the tasks of four
// open-loop runs of the default mix at 90% of C (bench/orders.js, 9 traces each), fib(35)'s p99
// read 1.82-1.91x first come, first served's without a bound, 1.81-1.87x with 1.9 and 1.67-1.70x
// with 1.7, fib(28)'s 0.53-0.57x, 0.57-0.63x and 0.67-0.70x: 1.9 holds fib(35) under its 2x goal
// and gives the smallest tasks most of their margin back (docs/design.md). On the big mix no
// bound from 1.7 up changed an order.
const LATENCY_BOUND = 1.9
// How long after its arrival a task of `costMs` that first come, first served would start in
// `waitMs` may still start (LATENCY_BOUND), before the bound of POOL_MAX_WAIT_MS.
export const latestStartMs = (costMs, waitMs) => LATENCY_BOUND * (waitMs + costMs) - costMs

// The express thread steps aside while every thread has been busy for more than this share of the
// recent time (a time constant of 1 s). Its task takes the cores from the running tasks and the
// main thread. On 2 threads with the default mix the share (the time two tasks computed, from the
// tasks of the report run of 2026-11-29) read 0.19-0.37 at half of C (10th to 90th percentile),
// 0.42-0.66 at 70%, 0.56-0.81 at 80% and 0.70-0.92 at 90%: at 0.5 the thread serves part of the
// time at 70% too. With a wait bound of 12 ms (EXPRESS_MIN_WAIT_COSTS times fib(28)'s 2.04 ms),
// beside the service at 0.35 (default mix, 5 rounds, ratios of medians against the FIFO pool,
// 2026-11-29): fib(28)'s p99 0.59x against 0.69x at 70%, the overall p99 1.01x against 1.03x at
// half of C, the same 1.01x at 70% and 0.89x against 0.94x at 80%. At 0.5 alone the overall p99 at
// 70% read 1.00x and 1.10x against 0.95x in an earlier run; on the big mix, where the thread then
// serves more at half of C, 1.08x against 1.02x there (docs/benchmarks.md, "Questions answered").
const EXPRESS_MAX_SATURATION = 0.5
const SATURATION_TIME_CONSTANT_MS = 1000
// A cheap task takes the express thread only if it would otherwise wait for a thread more than
// this many times its own predicted compute (and more than SECOND_SLOT_MAX_MS). The express task's
// compute comes out of the tasks running beside it, and at half of C the top 1% of all latencies
// is fib(35)'s, which its compute decides: with the wait bound at SECOND_SLOT_MAX_MS alone, a
// fib(35) shared the cores with two other tasks for 3.9-6.6 ms on average by round (default mix,
// 2026-11-29); at 12 ms for 1.6-4.8 ms, and at six times each task's compute 2.3-2.9 ms (the
// report run of that code).
const EXPRESS_MIN_WAIT_COSTS = 6
// The wait admission holds to POOL_MAX_WAIT_MS is the cost model's, stretched by how late the
// long waits have run (wait-error.js): their 99th percentile, learnt from the tasks the model
// would have predicted to wait at least WAIT_ERROR_FROM of the bound, where the error decides,
// had it known which tasks would go first (overtaking is the order's, not an error). In a flood
// of fib(34) on 2 threads (k6/overload.js), 20.0% and 20.5% of the admitted tasks waited over the
// bound with the model's wait alone, 3.6% and 4.4% stretched, and the threads were as busy.
const WAIT_QUANTILE = 0.99
const WAIT_ERROR_FROM = 0.25

const IDLE = Object.freeze({})
const EXPRESS = Object.freeze({ express: true })

// What Piscina rejects a task with when the thread it was on is terminated for another task.
const THREAD_TERMINATED = 'Terminating worker thread'

const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`
const atDeadline = (cancel) => cancel.abort('deadline')

async function pool (app, { threads, maxQueue, maxWaitMs, deadlineFactor, tasksPerThread, expressMaxMs, nice, timeoutMs, task = FIB_TASK, execArgv, cancelGraceMs = CANCEL_GRACE_MS }) {
  const balancer = new Balancer()
  // One thread beyond `threads` for the express task, when there is one (placeFor).
  const express = expressMaxMs > 0 ? 1 : 0
  const piscina = new Piscina({
    filename: task.file,
    // Both bounds set, and no idle timeout: threads start once and stay warm.
    minThreads: threads + express,
    maxThreads: threads + express,
    idleTimeout: Infinity,
    loadBalancer: balancer.balance,
    // Added to each worker thread's nice value on Linux (the main thread keeps its own).
    niceIncrement: nice,
    // Piscina's own run and wait histograms, which nothing reads: the metrics measure each task.
    recordTiming: false,
    // A thread reads its tasks as 'message' events, one at a time. With Atomics (Piscina's
    // default) a thread that wakes to two tasks handed over at once reads both in one loop and
    // computes the second before it posts the first's answer: in bursts of the default mix on 2
    // threads, 8.5% and 15.3% of the answers were held back a whole task that way (bench/gaps.js,
    // docs/benchmarks.md, "Questions answered").
    atomics: 'disabled',
    execArgv
  })
  // A round of one task per thread loads the task module everywhere before the app is ready, so
  // the first requests do not pay for thread start-up. The cost model learns from each thread's
  // fastest run: the first runs of fresh code are up to twice as slow, before the JIT optimises
  // it, and any run can be stretched by the scheduler (a container at its CPU quota is paused for
  // the rest of the 100 ms period). Noise only lengthens a run: learning from a last round that
  // happened to be paused made fib(43), 6 s, look like more than the 30 s deadline allows.
  const model = new CostModel()
  const fastest = new Map()
  for (let round = 1; round <= CALIBRATION_ROUNDS; round++) {
    const measured = await Promise.all(Array.from({ length: threads }, () => piscina.run(task.calibration)))
    for (const { threadId, computeMs } of measured) fastest.set(threadId, Math.min(computeMs, fastest.get(threadId) ?? Infinity))
  }
  for (const computeMs of fastest.values()) model.observe(task.work(task.calibration), computeMs)
  // The rounds above ran `threads` tasks at once, so that none shared a core; this one reaches
  // every thread, the express thread's too, to load the task there. Not learnt from.
  if (express > 0) await Promise.all(Array.from({ length: threads + express }, () => piscina.run(task.calibration)))

  // Waiting work is held here, where it can be ordered and a cancelled task simply removed;
  // Piscina is handed only what its threads can take at once. The queue counts tasks by their
  // size (work); the model turns work into milliseconds at its current rate.
  const queue = new DeadlineQueue()
  const recent = new RecentSizes(RECENT_TASKS)
  // The latencies first come, first served would have given the last arrivals: their p99 is the
  // recent tail, which caps the allowances and to which the order holds tasks (deferral.js). Not
  // kept in first-come-first-served order.
  const fifoLatencies = deadlineFactor > 0 ? new RecentQuantile(DEFER_WINDOW, 0.99, DEFER_EVERY) : undefined
  const deadlines = new Deadlines(timeoutMs, atDeadline)
  const alarm = new Alarm(pump)
  const slots = threads * tasksPerThread
  const events = new EventEmitter()
  let started = 0
  // Work handed to the threads and not yet done, counted whole: a task that waits for a thread
  // waits for those first (measured under a flood: leaving them out made the real wait twice the
  // predicted one).
  let startedWork = 0
  // Work handed to the pool's threads so far (the express thread's not counted): what went to them
  // between a queued task's admission and its own hand-over is what it really waited behind.
  let handedWork = 0
  // The thread the last express task went to. While it holds tasks (that one, or a cheap one
  // waiting behind it), the pool's threads are the other ones: a thread that frees up takes the
  // next task at once, however dear, rather than idle until the express thread's work ends.
  let expressThread
  const expressBusy = () => expressThread !== undefined
  const idleThreads = () => balancer.idle(expressBusy() ? threads + 1 : threads)
  // Kept only with the express thread, which alone reads it: updated as tasks start and settle.
  const saturation = new RecentShare(SATURATION_TIME_CONSTANT_MS)
  const noteSaturation = () => { if (express > 0) saturation.set(idleThreads() <= 0) }

  // The cost model's wait for a thread behind `ahead` queued work: the order goes by it.
  const modelWaitMs = (ahead = queue.work) => model.predict(ahead + startedWork) / threads
  const waitError = new WaitError(WAIT_QUANTILE)
  // Admission, readiness, Retry-After and the overtaking check, which all hold waits to times, go
  // by the model's wait stretched by its learnt error.
  const predictedWaitMs = (ahead) => modelWaitMs(ahead) * waitError.factor
  const retryAfter = () => Math.max(1, Math.ceil(predictedWaitMs() / 1000))

  function queueFull () {
    return Object.assign(new QueueFull(threads, maxQueue), { retryAfter: retryAfter() })
  }

  function queueWait (waitMs) {
    return Object.assign(new QueueWait(threads, seconds(waitMs), seconds(maxWaitMs)), { retryAfter: retryAfter() })
  }

  // Why a new task would be refused now (for readiness), or undefined.
  function refusal () {
    // An idle thread means an empty queue: pump() hands it the first waiting task at once.
    if (idleThreads() > 0) return undefined
    if (queue.size >= maxQueue) return queueFull()
    if (predictedWaitMs() > maxWaitMs) return queueWait(predictedWaitMs())
  }

  // Runs one task for `request`, the Node request it answers (Fastify's `request.raw`): a 'close'
  // before the task settles means its client has gone, and the task is cancelled. A queued task
  // leaves the queue, a running one has its thread terminated and replaced, so no thread computes
  // for nobody; but a cheap one, which ends sooner than a thread starts, runs on (start()).
  function run (input, request) {
    const work = task.work(input)
    // Every task counts in the recent mix, whether it waits, starts at once or is refused.
    const cheaperShare = recent.cheaperThan(work)
    const meanCostMs = model.predict(recent.mean)
    recent.add(work)
    const costMs = model.predict(work)
    if (costMs > timeoutMs) throw new OverDeadline(seconds(costMs), timeoutMs)
    // The wait first come, first served would give it: every task admitted before it.
    const fifoWaitMs = modelWaitMs()
    fifoLatencies?.add(fifoWaitMs + costMs)
    const place = queue.size === 0 && placeFor(work)
    if (place) {
      const job = admit(input, work, costMs, request)
      return settle(job, start(job, place))
    }
    if (queue.size >= maxQueue) throw queueFull()
    const now = performance.now()
    // The order goes by the model's wait; the task's latest start, a time, by the stretched one.
    const deadline = now + allowanceMs(deadlineFactor, costMs, fifoWaitMs, cheaperShare, meanCostMs, fifoLatencies?.value)
    // It overtakes no waiting task that it would push past that task's latest start (startBy).
    const stillInTime = (waiting, ahead) => predictedWaitMs(ahead + work) <= waiting.startBy - now
    const spot = queue.place(deadline, stillInTime)
    const waitMs = predictedWaitMs(spot.ahead)
    if (waitMs > maxWaitMs || waitMs + costMs > timeoutMs) throw queueWait(waitMs)
    const job = admit(input, work, costMs, request)
    job.waitFrom = { startedWork, handedWork, msPerWork: model.predict(1) }
    job.startBy = Math.min(job.admitted + maxWaitMs, now + latestStartMs(costMs, predictedWaitMs()))
    job.deferBy = now + deferByMs(costMs, fifoWaitMs)
    const answer = settle(job, new Promise((resolve, reject) => {
      const entry = queue.push(job, work, deadline, spot)
      job.resolve = resolve
      job.reject = reject
      // Named first: written straight into the property, V8 would make it in the old space
      // (task-records.js).
      const dequeue = () => {
        queue.delete(entry)
        reject(job.cancel.reason)
      }
      job.dequeue = dequeue
      job.cancel.once('abort', job.dequeue)
    }))
    // The first waiting task may fit behind a busy thread's task that has come near its end since
    // the last completion: handed over now, not at the next one, it starts as that task ends.
    pump()
    return answer
  }

  // An admitted task; its deadline runs from here.
  function admit (input, work, costMs, request) {
    const cancel = new Cancellation()
    return { input, work, costMs, cancel, release: cancelOn(cancel, request), admitted: performance.now() }
  }

  // Cancels a task when its client goes away (the request's 'close' while the task is in flight)
  // or at its deadline, whichever comes first. Either rejects the task at once, and its settling
  // calls what this returns, which stops the other. Not Fastify's request.signal: a controller a
  // request, which Fastify 5.12 aborts after every answer in an app without a logger or an
  // onResponse hook (docs/design.md, "The pool"). Not AbortSignal.timeout(), which cannot be
  // cleared (each task's timer outlived it by REQUEST_TIMEOUT_MS), nor AbortSignal.any(), which
  // tracks its sources through weak references: 2.5-4.9 us a task against 0.4-0.7 for a
  // controller and a timer (docs/benchmarks.md, "Questions answered"), which cancellation.js
  // and deadlines.js lighten again.
  function cancelOn (cancel, request) {
    const gone = () => cancel.abort('client_gone', true)
    const entry = deadlines.add(cancel)
    if (request.destroyed) gone()
    else request.on('close', gone)
    return () => {
      deadlines.delete(entry)
      request.removeListener('close', gone)
      cancel.settled()
    }
  }

  // Where a task of `work` can go now: IDLE, an idle thread; `{ behind, dear }`, behind the one
  // task of that busy thread (not the express thread's, unless the task could go there: notBehind),
  // predicted to end within SECOND_SLOT_MAX_MS and within twice that at half its predicted speed
  // (balancer.js; dear: predicted over SECOND_SLOT_MAX_MS, so cancelled there once the task ahead
  // has settled, start()); EXPRESS, the express thread, for a task of at most POOL_EXPRESS_MAX_MS
  // at the fastest the machine has computed (cost.js: on a host whose speed swings 2x, a cheap task
  // stays cheap) when no thread's work is predicted to end within SECOND_SLOT_MAX_MS nor within
  // EXPRESS_MIN_WAIT_COSTS times the task's compute and the threads are not saturated
  // (EXPRESS_MAX_SATURATION); or nowhere (undefined): it waits in the queue. The express task
  // shares the cores with the threads' tasks rather than wait for one of them to end: a fib(26)
  // that finds both threads on a fib(34) takes ~1 ms instead of up to 33.
  function placeFor (work, now = performance.now()) {
    if (idleThreads() > 0) return IDLE
    const behind = started < slots ? balancer.endingBy(now, SECOND_SLOT_MAX_MS, notBehind(work)) : undefined
    if (behind !== undefined) return { behind, dear: dear(work) }
    if (expressBusy() || !expressFits(work) || balancer.idle(threads + express) <= 0) return undefined
    const minWaitMs = Math.max(SECOND_SLOT_MAX_MS, EXPRESS_MIN_WAIT_COSTS * model.predict(work))
    return balancer.soonestEnd() > now + minWaitMs ? EXPRESS : undefined
  }

  const dear = (work) => model.predict(work) > SECOND_SLOT_MAX_MS
  const expressFits = (work) => model.fastest(work) <= expressMaxMs && saturation.value <= EXPRESS_MAX_SATURATION
  // The thread a task of `work` may not wait behind: the express thread's, unless the task could
  // have gone there itself. Behind the express thread's short task, any task started as a third
  // beside the two threads' on 2 cores: at half of C on the big mix, 23% of the fib(34)s computed
  // beside two others, 1.25x as long as the rest, and the overall p99 was 1.16x the FIFO pool's
  // (8% and 1.01x with this rule).
  const notBehind = (work) => expressBusy() && !expressFits(work) ? expressThread : undefined

  function start (job, place) {
    const { behind } = place
    const behindBusy = behind !== undefined
    // A queued task's wait as the cost model would have predicted it at its admission, had it known
    // what would go first: later, cheaper arrivals included. Only the model's error is learnt.
    const from = job.waitFrom
    if (from !== undefined) job.modelWaitMs = (from.startedWork + handedWork - from.handedWork) * from.msPerWork / threads
    if (place !== EXPRESS) handedWork += job.work
    started++
    startedWork += job.work
    // Piscina cancels a task by terminating its thread. A task that may wait behind a busy
    // thread's task is not cancelled there, or the task running on that thread would lose its
    // work: its client is answered at once, and a cheap task runs and its result is dropped; a
    // dear one is cancelled there once the task ahead of it has settled. A cheap task on a thread
    // of its own whose client goes away runs on for up to cancelGraceMs (CANCEL_GRACE_MS) and keeps
    // its thread; its result is dropped.
    const signal = behindBusy ? (place.dear ? cancelAlone(job.cancel, behind) : undefined) : job.cancel
    if (!behindBusy && !dear(job.work)) job.cancel.graceMs = cancelGraceMs
    // A task waiting on a thread terminated to cancel the task it ran has done no work yet: it
    // is handed over again.
    const attempt = () => {
      const { promise, thread } = balancer.place(() => piscina.run(job.input, { signal }), job.costMs, behind)
      if (place === EXPRESS) expressThread = thread
      noteSaturation()
      return promise.then((result) => {
        settled(thread)
        return result
      }, (err) => {
        settled(thread)
        if (err.message !== THREAD_TERMINATED || job.cancel.aborted) throw err
        events.emit('retried')
        return attempt()
      })
    }
    const done = attempt().finally(() => {
      started--
      // Zero when idle, so that rounding never leaves a ghost of work behind.
      startedWork = started === 0 ? 0 : startedWork - job.work
      pump()
    })
    return behindBusy ? releasedOnCancel(done, job.cancel) : done
  }

  // A task handed to `thread` has settled; the express thread, once it holds none, is spare again.
  function settled (thread) {
    balancer.settled(thread)
    if (thread === expressThread && !balancer.holds(thread)) expressThread = undefined
    noteSaturation()
  }

  // A signal for a task about to be handed to `thread` behind the task running there: aborted with
  // `cancel`, but not before that task has settled, so that the thread terminated for this one
  // computes nothing else.
  function cancelAlone (cancel, thread) {
    const alone = new Cancellation()
    const abort = () => alone.abort(cancel.cause)
    let ahead = true
    balancer.afterCurrent(thread, () => {
      ahead = false
      if (cancel.aborted) abort()
    })
    cancel.once('abort', () => { if (!ahead) abort() })
    return alone
  }

  // The request's side of a task not cancelled in its thread: settled at once on cancellation.
  // (The task's own signal: once it settles, nothing aborts it any more.)
  function releasedOnCancel (done, cancel) {
    return new Promise((resolve, reject) => {
      cancel.once('abort', () => reject(cancel.reason))
      done.then(resolve, reject)
    })
  }

  // Hands queued tasks to the threads while they can take them, then sets the alarm for when the
  // first task left waiting may go behind a busy thread's task that has come near enough its
  // predicted end, in case no arrival or completion runs pump() by then. `at`: the moment the
  // alarm was set for, taken as come.
  function pump (at = 0) {
    let entry
    while (queue.size > 0) {
      const now = Math.max(at, performance.now())
      entry = nextToStart(queue, now, fifoLatencies?.value ?? Infinity)
      const place = placeFor(entry.cost, now)
      if (!place) break
      queue.delete(entry)
      const job = entry.item
      job.cancel.removeListener('abort', job.dequeue)
      start(job, place).then(job.resolve, job.reject)
    }
    alarm.set(queue.size > 0 && started < slots ? balancer.opensAt(SECOND_SLOT_MAX_MS, notBehind(entry.cost)) : Infinity)
  }

  function settle (job, promise) {
    return promise.finally(job.release).then((result) => {
      // Its client went while it ran on (start()): nobody takes the result.
      if (job.cancel.aborted) return unanswered(job, job.cancel.reason)
      model.observe(job.work, result.computeMs)
      const waitMs = Math.max(0, performance.now() - job.admitted - result.computeMs)
      if (job.modelWaitMs >= WAIT_ERROR_FROM * maxWaitMs) waitError.observe(job.modelWaitMs, waitMs)
      events.emit('completed', { computeMs: result.computeMs, waitMs, predictedMs: job.costMs })
      return result
    }, (err) => unanswered(job, err))
  }

  // A task settled without an answer for its client, failed or cancelled: throws what it gets.
  function unanswered (job, err) {
    const { cause } = job.cancel
    if (cause === undefined) events.emit('failed')
    else events.emit('aborted', cause)
    if (cause === 'deadline') throw new DeadlineExceeded(timeoutMs)
    throw err
  }

  app.decorate('pool', {
    run,
    refusal,
    threads,
    maxQueue,
    maxWaitMs,
    events,
    piscina,
    // Tasks on a thread (the express thread's not counted), and tasks admitted and waiting (in
    // the queue or behind a busy thread's task).
    get busy () { return Math.min(balancer.running - (expressBusy() ? 1 : 0), threads) },
    get queued () { return queue.size + started - balancer.running },
    get inFlight () { return started + queue.size },
    // Predicted compute of the queued tasks, and the wait for a thread it means, with the work
    // already on the threads.
    get queuedWorkMs () { return model.predict(queue.work) },
    get predictedWaitMs () { return predictedWaitMs() },
    // What the model's predicted waits are stretched by (wait-error.js): 1 until long waits run late.
    get waitErrorFactor () { return waitError.factor },
    predict: (input) => model.predict(task.work(input))
  })
  // Runs after the server has drained its requests, so no task is cut short here.
  app.addHook('onClose', async () => {
    alarm.set(Infinity)
    deadlines.close()
    await piscina.close()
  })
}

export default fp(pool, { name: 'pool' })
