// GET /health: liveness, answered by the main thread at once, whatever the load.
import { POLLED } from '../request-log.js'

export default async function healthRoute (app, { schema }) {
  // A saturated service is alive: liveness never depends on the pool or on pressure.
  app.get('/health', { schema, config: POLLED }, async () => ({ status: 'ok' }))
}
