// Baseline 7, the Fastify app most people would write for the same endpoint, for the trivial
// path's account: Fastify's own request logging at info (two lines a request), a UUID request id
// sent back in a hook, a prom-client histogram by method, route and status, and the work computed
// in the handler (so under heavy load it is the single thread).
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import { Histogram, register } from 'prom-client'
import { inline, PORT } from './common.js'

const app = Fastify({ logger: { level: 'info' }, genReqId: () => randomUUID() })
const duration = new Histogram({ name: 'http_request_duration_seconds', help: 'Request duration.', labelNames: ['method', 'route', 'status_code'] })

app.addHook('onRequest', async (request, reply) => {
  reply.header('x-request-id', request.id)
})
app.addHook('onResponse', async (request, reply) => {
  duration.observe({ method: request.method, route: request.routeOptions.url, status_code: reply.statusCode }, reply.elapsedTime / 1000)
})
app.get('/health', async () => ({ status: 'ok' }))
app.get('/metrics', async (request, reply) => reply.type(register.contentType).send(await register.metrics()))
app.get('/fib', async (request) => {
  const num = Number(request.query.num)
  return { num, ...inline(num) }
})
await app.listen({ port: PORT, host: '127.0.0.1' })
