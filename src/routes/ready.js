// GET /ready: readiness, 503 while the queue is full, the main thread is under pressure, or closing.
import { HttpError, shuttingDown } from '../errors.js'

// Pressure is answered before this handler by the scope's under-pressure hook.
export default async function readyRoute (app, { schema }) {
  app.get('/ready', { schema }, async () => {
    if (app.closing) throw shuttingDown()
    if (app.pool.full) {
      throw new HttpError(503, 'QUEUE_FULL', 'Every thread is busy and the queue is full', { retryAfter: app.pool.retryAfter() })
    }
    return { status: 'ready' }
  })
}
