// What every baseline server shares, so that only the concurrency strategy differs:
// the same naive fib, the same response shape, the same port handling, Fastify for HTTP.
import Fastify from 'fastify'
import fibTask from '../../workers/fib.js'

export const PORT = Number(process.env.PORT || 3000)
const HOST = '127.0.0.1'
export const THREADS = Number(process.env.THREADS || 2)

// The same work and the same body as the service's.
export { fibTask }

// A Fastify app with /health and a /fib whose handler `compute(num, signal)` resolves to the
// body. With `{ signal: true }` it is handed the request's signal (which Fastify creates on first
// use, so the others go without).
export async function serve (compute, { signal = false } = {}) {
  const app = Fastify({ logger: false })
  // Fastify 5.12 releases request.signal's listener on the request's 'close' only in an app with a
  // logger or an onResponse hook; without either, the 'close' that ends every answered request
  // aborts its signal, building a DOMException with its stack: 12% of the main thread at
  // concurrency 1 (fastify/fastify#7033). The service has a logger and so does not pay it; nor,
  // with this hook, do the baselines.
  if (signal) app.addHook('onResponse', (request, reply, done) => done())
  app.get('/health', async () => ({ status: 'ok' }))
  app.get('/fib', async (request) => {
    const num = Number(request.query.num)
    return { num, ...await compute(num, signal ? request.signal : undefined) }
  })
  await app.listen({ port: PORT, host: HOST })
  return app
}

export const inline = (num) => fibTask({ num })

// The dispatch of the pool baselines: each worker (child process or thread) is handed one task at
// a time (TASKS_PER_WORKER=2: up to two, the second waiting in its port until the first ends,
// handed to the worker holding fewer), the rest wait in a FIFO here. `post(worker, { id, num })`
// sends a task; the baseline hands each answer ({ id, ...body }) to `answered(worker, answer)`.
// `compute` is serve's handler.
export function dispatcher (workers, post, perWorker = Number(process.env.TASKS_PER_WORKER || 1)) {
  const held = new Map(workers.map((worker) => [worker, 0]))
  const queue = []
  const pending = new Map()
  let nextId = 0

  function dispatch (worker, { num, resolve }) {
    const id = nextId++
    pending.set(id, resolve)
    held.set(worker, held.get(worker) + 1)
    post(worker, { id, num })
  }

  // The worker holding the fewest tasks, if it may take one more.
  function leastHeld () {
    let least
    for (const [worker, tasks] of held) {
      if (tasks < perWorker && (least === undefined || tasks < held.get(least))) least = worker
    }
    return least
  }

  return {
    answered (worker, { id, ...out }) {
      pending.get(id)(out)
      pending.delete(id)
      held.set(worker, held.get(worker) - 1)
      const next = queue.shift()
      if (next) dispatch(worker, next)
    },
    compute: (num) => new Promise((resolve) => {
      const worker = leastHeld()
      if (worker) dispatch(worker, { num, resolve })
      else queue.push({ num, resolve })
    })
  }
}
