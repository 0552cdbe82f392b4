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
