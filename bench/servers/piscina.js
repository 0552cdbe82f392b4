// Baseline 7, the floor of the service's hand-off: Fastify and Piscina with THREADS fixed threads
// and nothing else, each task carrying its request's signal, as a task must to be cancelled when
// its client goes away. Against the worker_threads pool it prices Piscina; against the service,
// everything the service adds (its queue, deadlines, metrics, logs, hooks). SIGNAL=0 runs the
// tasks without a signal, which cannot be cancelled: the price of Piscina's hand-off alone
// (bench/ladder.js); and with TASKS_PER_WORKER=2 besides, each thread is handed two tasks at
// once, as the service does (Piscina puts at most one task with a signal on a thread). A floor
// of throughput, not of latency: Piscina 5.3 keeps no arrival order for the tasks that wait (each
// completion sends the next one to the back; docs/design.md).
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { serve, THREADS } from './common.js'

const piscina = new Piscina({
  filename: fileURLToPath(new URL('../../workers/fib.js', import.meta.url)),
  minThreads: THREADS,
  maxThreads: THREADS,
  idleTimeout: Infinity,
  concurrentTasksPerWorker: Number(process.env.TASKS_PER_WORKER || 1)
})

const withSignal = process.env.SIGNAL !== '0'
await serve((num, signal) => piscina.run({ num }, { signal }), { signal: withSignal })
