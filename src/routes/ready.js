// GET /ready: readiness, 503 while the queue is full or its predicted wait is over the bound,
// the main thread is under pressure, or the service is closing.
import { POLLED } from '../request-log.js'

// Pressure and closing are answered before this handler, by the scope's onRequest hooks.
export default async function readyRoute (app, { schema }) {
  app.get('/ready', { schema, config: POLLED }, async () => {
    const refusal = app.pool.refusal()
    if (refusal !== undefined) throw refusal
    return { status: 'ready' }
  })
}
