// The open loop's other place for the order: Fastify + Piscina with the waiting tasks ordered
// inside Piscina, by its `taskQueue` option, with the service's virtual deadline (arrival +
// allowanceMs(), from the predicted compute, the predicted wait and the recent mix,
// src/pool/index.js; not the recent tail's cap, nor deferral) and its cost model. Piscina hands a
// freed thread the next task in its own completion callback, with no hop through the pool's code.
// Tasks carry no signal: Piscina 5.3 puts a task with a signal that finds no free thread in a queue
// of its own, ahead of the taskQueue (piscinajs/piscina issue 899), which undoes the order. So a
// task whose client goes away leaves the queue while it waits, but one that runs cannot be
// cancelled. No admission bound: the benchmark's loads stay under it.
import { performance } from 'node:perf_hooks'
import { Piscina } from 'piscina'
import { DEFAULT_POOL_DEADLINE_FACTOR } from '../../src/config.js'
import { CostModel } from '../../src/pool/cost.js'
import { allowanceMs, CALIBRATION_ROUNDS, FIB_TASK, RECENT_TASKS } from '../../src/pool/index.js'
import { RecentSizes } from '../../src/pool/recent-sizes.js'
import { serve, THREADS } from './common.js'
import { PiscinaDeadlineQueue } from './deadline-task-queue.js'

const model = new CostModel()
const recent = new RecentSizes(RECENT_TASKS)
// Work handed to the threads and not yet done, counted whole, as the service counts it.
let startedWork = 0

// One task a thread, to an idle one; a task handed to a thread counts as started work from then
// (calibration runs carry no size). Not counted in shift(): Piscina takes a task out of the queue
// at every completion and puts it back when no thread is free, so it would count again each time.
function balance (task, workers) {
  const idle = workers.find((worker) => worker.currentUsage === 0) ?? null
  if (idle !== null) startedWork += task[Piscina.queueOptionsSymbol]?.work ?? 0
  return idle
}

const queue = new PiscinaDeadlineQueue()
const piscina = new Piscina({
  filename: FIB_TASK.file,
  minThreads: THREADS,
  maxThreads: THREADS,
  idleTimeout: Infinity,
  taskQueue: queue,
  loadBalancer: balance,
  recordTiming: false
})
// The service's calibration input and rounds, every run learned from (the service keeps each
// thread's fastest).
for (let round = 0; round < CALIBRATION_ROUNDS; round++) {
  const runs = await Promise.all(Array.from({ length: THREADS }, () => piscina.run(FIB_TASK.calibration)))
  for (const { computeMs } of runs) model.observe(FIB_TASK.work(FIB_TASK.calibration), computeMs)
}

function run (num, signal) {
  const size = FIB_TASK.work({ num })
  const costMs = model.predict(size)
  const waitMs = model.predict(queue.work + startedWork) / THREADS
  const allowance = allowanceMs(DEFAULT_POOL_DEADLINE_FACTOR, costMs, waitMs, recent.cheaperThan(size), model.predict(recent.mean))
  recent.add(size)
  const input = { num, [Piscina.queueOptionsSymbol]: { deadline: performance.now() + allowance, work: size } }
  const done = piscina.run(input)
  return new Promise((resolve, reject) => {
    const gone = () => { if (queue.cancel(input)) reject(signal.reason) }
    signal.addEventListener('abort', gone, { once: true })
    done.then((result) => {
      model.observe(size, result.computeMs)
      resolve(result)
    }, reject).finally(() => {
      signal.removeEventListener('abort', gone)
      startedWork = Math.max(0, startedWork - size)
    })
  })
}

await serve(run, { signal: true })
