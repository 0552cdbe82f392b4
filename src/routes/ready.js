// GET /ready: readiness, 503 while the queue is full or its predicted wait is over the bound,
// the main thread is under pressure, or the service is closing.
import { shuttingDown } from '../errors.js'
import { POLLED } from '../request-log.js'

// Pressure is answered before this handler by the scope's under-pressure hook.
export default async function readyRoute (app, { schema }) {
  app.get('/ready', { schema, config: POLLED }, async () => {
    if (app.closing) throw shuttingDown()
    const refusal = app.pool.refusal()
    if (refusal !== undefined) throw refusal
    return { status: 'ready' }
  })
}
