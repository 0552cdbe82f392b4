import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import { test } from 'tap'
import { unusedConnections } from '../src/drain.js'
import { build, TEST_TASK, until } from './helper.js'

async function listen (t, env) {
  const { app } = await build(t, { POOL_THREADS: '1', FIB_MAX_NUM: '78', ...env }, { task: TEST_TASK })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: app.server.address().port }
}

function get (port, path, agent) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = ''
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ statusCode: res.statusCode, headers: res.headers, body }))
    }).on('error', reject)
  })
}

test('a response outside shutdown keeps the connection alive', async (t) => {
  const { port } = await listen(t)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const sockets = new Set()
  agent.on('free', (socket) => sockets.add(socket))
  for (const path of ['/fib?num=3', '/health', '/fib?num=x']) {
    const res = await get(port, path, agent)
    t.equal(res.headers.connection, 'keep-alive', `${path}: ${res.statusCode}`)
  }
  t.equal(sockets.size, 1, 'the three requests shared one connection')
})

test('a request in flight on a keep-alive connection finishes, then the connection closes', async (t) => {
  const { app, port } = await listen(t)
  const agent = new http.Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  const inFlight = get(port, '/fib?num=50', agent) // 500 ms of work
  await until(() => app.pool.inFlight === 1)
  const closed = app.close()
  const res = await inFlight
  t.equal(res.statusCode, 200)
  t.equal(JSON.parse(res.body).result, 50)
  t.equal(res.headers.connection, 'close', 'the client is told not to reuse it')
  // Without that header the server would wait out the 72 s keep-alive timeout.
  await closed
  t.pass('the app closed without waiting for the client')
})

test('a connection opened but never used does not hold shutdown open', async (t) => {
  const { app, port } = await listen(t)
  const accepted = once(app.server, 'connection')
  const socket = net.connect(port, '127.0.0.1')
  await accepted
  const ended = new Promise((resolve) => socket.once('close', resolve))
  await app.close()
  await ended
  t.pass('the idle, unused connection was closed and the app closed')
})

test('a connection counts as unused until it sends a request or closes: the set does not grow for ever', async (t) => {
  const server = http.createServer((req, res) => res.end())
  const unused = unusedConnections(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const { port } = server.address()

  const silent = net.connect(port, '127.0.0.1')
  await until(() => unused.size === 1)
  silent.destroy()
  await until(() => unused.size === 0)
  t.pass('a connection closed without a request was forgotten')

  const agent = new http.Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  await get(port, '/', agent)
  t.equal(unused.size, 0, 'a connection that sent a request is no longer unused, though still open')
})
