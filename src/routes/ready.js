// GET /ready: readiness, 503 while the queue is full, the main thread is under pressure, or closing.
import { shuttingDown } from '../errors.js'

// Pressure is answered before this handler by the scope's under-pressure hook.
export default async function readyRoute (app, { schema }) {
  app.get('/ready', { schema }, async () => {
    if (app.closing) throw shuttingDown()
    if (app.pool.full) throw app.pool.queueFull()
    return { status: 'ready' }
  })
}
