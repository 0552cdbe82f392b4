// GET /health (liveness) and GET /ready (readiness): both answered by the main thread at once.
import { HttpError, shuttingDown } from '../errors.js'

export default async function healthRoutes (app, { schemas }) {
  // A saturated service is alive: liveness never depends on the pool.
  app.get('/health', { schema: schemas.health }, async () => ({ status: 'ok' }))

  app.get('/ready', { schema: schemas.ready }, async () => {
    if (app.closing) throw shuttingDown()
    if (app.pool.full) {
      throw new HttpError(503, 'QUEUE_FULL', 'Every thread is busy and the queue is full', { retryAfter: app.pool.retryAfter() })
    }
    return { status: 'ready' }
  })
}
