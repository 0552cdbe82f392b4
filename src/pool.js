// The Piscina pool: sized once, its admission bounded, every task under a deadline, closed with the app.
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import fp from 'fastify-plugin'
import { Piscina } from 'piscina'
import { HttpError } from './errors.js'

// Weight of the newest task in the recent mean: about the last ten tasks count.
const RECENT_WEIGHT = 0.2
const FIB_WORKER = fileURLToPath(new URL('../workers/fib.js', import.meta.url))
// What Piscina rejects a task with when the thread it was on is terminated for another task.
const THREAD_TERMINATED = 'Terminating worker thread'

// Piscina puts at most one task that carries a signal on a thread, so a thread that finishes a
// task idles until the main thread has taken the result and handed it the next one. This
// balancer lets a second task wait on a busy thread (only when no thread is idle), so the thread
// starts it the moment the first ends: +14% throughput at fib(27) on 2 threads (bench/README.md).
function twoPerThread (task, workers) {
  let busyWithOne = null
  for (const worker of workers) {
    if (worker.currentUsage === 0) return worker
    if (busyWithOne === null && worker.isRunningAbortableTask) busyWithOne = worker
  }
  return busyWithOne
}

async function pool (app, { threads, maxQueue, tasksPerThread, nice, timeoutMs, workerFile = FIB_WORKER }) {
  const piscina = new Piscina({
    filename: workerFile,
    // Both bounds set, and no idle timeout: threads start once and stay warm.
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Infinity,
    // Piscina never refuses a task that carries a signal, so this is a backstop:
    // the admission count below is what bounds the queue.
    maxQueue,
    ...(tasksPerThread === 2 && { loadBalancer: twoPerThread }),
    // Added to each worker thread's nice value on Linux (the main thread keeps its own).
    niceIncrement: nice
  })
  // One trivial task per thread loads the task module everywhere before the app is ready,
  // so the first requests do not pay for thread start-up against their deadline.
  await Promise.all(Array.from({ length: threads }, () => piscina.run({ num: 0 })))

  const capacity = threads + maxQueue
  let inFlight = 0
  // Mean compute time of recent tasks (exponentially weighted), unknown until one completes.
  let recentMeanMs

  // Admitted tasks split into those on a thread and those waiting for one.
  const busy = () => Math.min(inFlight, threads)
  const queued = () => Math.max(0, inFlight - threads)

  // Seconds until the queued work is likely done: queued tasks x mean task time / threads.
  function retryAfter () {
    return Math.max(1, Math.ceil(queued() * (recentMeanMs ?? 0) / threads / 1000))
  }

  // The refusal of a request when every thread is busy and the queue is full.
  function queueFull () {
    const message = `All ${threads} threads are busy and ${maxQueue} tasks are queued; retry later`
    return new HttpError(503, 'QUEUE_FULL', message, { retryAfter: retryAfter() })
  }

  function record ({ computeMs }) {
    recentMeanMs = recentMeanMs === undefined ? computeMs : recentMeanMs + RECENT_WEIGHT * (computeMs - recentMeanMs)
  }

  // Runs one task; `signal` aborts it (the client went away). A queued task is dropped,
  // a running one has its thread terminated and replaced, so no thread computes for nobody.
  function run (task, signal) {
    if (inFlight >= capacity) throw queueFull()
    inFlight++
    const { metrics } = app
    const admitted = performance.now()
    const deadline = AbortSignal.timeout(timeoutMs)
    const cancel = AbortSignal.any([deadline, signal])
    // A task sharing its thread with one that is aborted loses the thread too: it runs again.
    const attempt = () => piscina.run(task, { signal: cancel }).catch((err) => {
      if (err.message !== THREAD_TERMINATED || cancel.aborted) throw err
      metrics.retried.inc()
      return attempt()
    })
    return attempt()
      .then((result) => {
        metrics.completed.inc()
        metrics.taskRun.observe(result.computeMs / 1000)
        metrics.taskWait.observe(Math.max(0, performance.now() - admitted - result.computeMs) / 1000)
        record(result)
        return result
      }, (err) => {
        if (deadline.aborted) {
          metrics.aborted.inc({ reason: 'deadline' })
          throw new HttpError(504, 'DEADLINE_EXCEEDED', `The task did not finish within ${timeoutMs} ms and was cancelled`, { cause: err })
        }
        if (signal.aborted) metrics.aborted.inc({ reason: 'client_gone' })
        else metrics.failed.inc()
        throw err
      })
      .finally(() => { inFlight-- })
  }

  app.decorate('pool', {
    run,
    threads,
    maxQueue,
    capacity,
    queueFull,
    get full () { return inFlight >= capacity },
    get inFlight () { return inFlight },
    get busy () { return busy() },
    get queued () { return queued() },
    piscina
  })
  // Runs after the server has drained its requests, so no task is cut short here.
  app.addHook('onClose', async () => {
    await piscina.close()
  })
}

export default fp(pool, { name: 'pool' })
