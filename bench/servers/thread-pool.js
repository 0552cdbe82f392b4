// Baseline 6, the floor of the service's architecture: the main thread owns HTTP and dispatches
// to a fixed pool of THREADS worker threads with postMessage, each thread one task at a time, the
// rest in a FIFO on the main thread. No Piscina, no deadline, no cancellation, no metrics: what
// threads cost against processes (the IPC pool and the cluster), with nothing else on top.
import { Worker } from 'node:worker_threads'
import { serve, THREADS } from './common.js'
import { dispatcher } from './dispatcher.js'

const THREAD = new URL('./pool-thread.js', import.meta.url)
const threads = Array.from({ length: THREADS }, () => new Worker(THREAD))
const { answered, compute } = dispatcher(threads, (thread, task) => thread.postMessage(task))
for (const thread of threads) thread.on('message', (answer) => answered(thread, answer))

await serve(compute, { signal: process.env.SIGNAL === '1' })
