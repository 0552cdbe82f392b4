// Baseline 4: a new worker thread for every request, terminated after its answer.
import { Worker } from 'node:worker_threads'
import { serve } from './common.js'

const WORKER = new URL('./thread.js', import.meta.url)

await serve((num) => new Promise((resolve, reject) => {
  const worker = new Worker(WORKER, { workerData: { num } })
  worker.once('message', (out) => {
    resolve(out)
    worker.terminate()
  })
  worker.once('error', reject)
}))
