import { test } from 'tap'
import { build } from './helper.js'

test('the listener looks for silent connections at least every second, and as often as the headers timeout when shorter', async (t) => {
  // Node's own default is every 30 s: a 10 s headers timeout would hold a silent connection 40 s.
  const interval = async (env) => (await build(t, { POOL_THREADS: '1', ...env })).app.server.connectionsCheckingInterval
  t.equal(await interval({ HTTP_HEADERS_TIMEOUT_MS: '10000' }), 1000)
  t.equal(await interval({ HTTP_HEADERS_TIMEOUT_MS: '200', HTTP_RECEIVE_TIMEOUT_MS: '400' }), 200)
})

test('the listener takes at most HTTP_MAX_CONNECTIONS connections', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', HTTP_MAX_CONNECTIONS: '7' })
  t.equal(app.server.maxConnections, 7)
})
