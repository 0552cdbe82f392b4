// Baseline 6, the floor of the service's architecture: the main thread owns HTTP and dispatches
// to a fixed pool of THREADS worker threads with postMessage, each thread one task at a time, the
// rest in a FIFO on the main thread. No Piscina, no deadline, no cancellation, no metrics: what
// threads cost against processes (the IPC pool and the cluster), with nothing else on top.
import { Worker } from 'node:worker_threads'
import { serve, THREADS } from './common.js'

const THREAD = new URL('./pool-thread.js', import.meta.url)
const idle = []
const queue = []
const pending = new Map()
let nextId = 0

for (let i = 0; i < THREADS; i++) {
  const worker = new Worker(THREAD)
  worker.on('message', ({ id, ...out }) => {
    pending.get(id)(out)
    pending.delete(id)
    const next = queue.shift()
    if (next) dispatch(worker, next)
    else idle.push(worker)
  })
  idle.push(worker)
}

function dispatch (worker, { num, resolve }) {
  const id = nextId++
  pending.set(id, resolve)
  worker.postMessage({ id, num })
}

await serve((num) => new Promise((resolve) => {
  const worker = idle.pop()
  if (worker) dispatch(worker, { num, resolve })
  else queue.push({ num, resolve })
}))
