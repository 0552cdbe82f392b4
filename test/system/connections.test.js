// Slow, silent and too many connections, on a real socket: nothing holds the service.
import net from 'node:net'
import { once } from 'node:events'
import { test } from 'tap'
import { build, until } from '../helper.js'

// Opens a connection, writes `send` once connected, and resolves when the server closes it, with
// what it answered and when.
function connect (port, send = '') {
  const started = Date.now()
  const socket = net.connect(port, '127.0.0.1', () => { if (send) socket.write(send) })
  let answer = ''
  socket.on('data', (chunk) => { answer += chunk })
  socket.on('error', () => {})
  // 'close' follows an 'error' too (a reset), which once() would reject on.
  const closed = new Promise((resolve) => socket.on('close', () => resolve({ answer, afterMs: Date.now() - started })))
  return { socket, closed }
}

async function listen (t, env) {
  const { app } = await build(t, { POOL_THREADS: '1', ...env })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: app.server.address().port }
}

test('a connection that sends nothing, half its headers or half its body gets 408 and is closed within its timeout', async (t) => {
  const { port } = await listen(t, { HTTP_HEADERS_TIMEOUT_MS: '200', HTTP_RECEIVE_TIMEOUT_MS: '400' })
  const clients = {
    nothing: connect(port),
    'half its headers': connect(port, 'GET /fib?num=3 HTTP/1.1\r\nHost: x\r\n'),
    'half its body': connect(port, 'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a":')
  }
  for (const [what, { closed }] of Object.entries(clients)) {
    const { answer, afterMs } = await closed
    // The routes take no body: /health answers at once, and the rest that never comes is a 408.
    t.match(answer, /HTTP\/1\.1 408 Request Timeout\r\n/, `${what}: 408`)
    // The timeout, plus Node's check every 200 ms, plus room for a loaded machine.
    t.ok(afterMs < 5000, `${what}: closed after ${afterMs} ms`)
  }
})

test('/health keeps answering while 3000 stalled connections are open', async (t) => {
  const { port } = await listen(t, {})
  const stalled = Array.from({ length: 3000 }, () => connect(port, 'GET /health HTTP/1.1\r\nHost: x\r\n'))
  await Promise.all(stalled.map(({ socket }) => once(socket, 'connect')))
  const latencies = []
  for (let i = 0; i < 20; i++) {
    const sent = performance.now()
    const res = await fetch(`http://127.0.0.1:${port}/health`)
    t.equal(res.status, 200)
    latencies.push(performance.now() - sent)
  }
  t.pass(`median /health ${latencies.sort((a, b) => a - b)[10].toFixed(1)} ms beside 3000 stalled connections`)
  for (const { socket } of stalled) socket.destroy()
})

test('past HTTP_MAX_CONNECTIONS a new connection is closed at once, and served again once others close', async (t) => {
  const { port } = await listen(t, { HTTP_MAX_CONNECTIONS: '3' })
  const held = Array.from({ length: 3 }, () => connect(port))
  await Promise.all(held.map(({ socket }) => once(socket, 'connect')))
  const over = connect(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal((await over.closed).answer, '', 'closed without an answer')
  for (const { socket } of held) socket.destroy()
  // The server counts a connection gone once it has seen it close.
  await until(() => fetch(`http://127.0.0.1:${port}/health`).then((res) => res.status === 200, () => false))
  t.pass('served again')
})

test('headers over Node\'s limit get 431, and the service serves on', async (t) => {
  const { port } = await listen(t, {})
  const big = connect(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  t.match((await big.closed).answer, /^HTTP\/1\.1 431 /)
  t.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200)
})

test('the METRICS_PORT listener closes a silent connection too', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', METRICS_PORT: '9464', HTTP_HEADERS_TIMEOUT_MS: '200', HTTP_RECEIVE_TIMEOUT_MS: '400' })
  await app.metricsServer.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.metricsServer.close())
  const { answer, afterMs } = await connect(app.metricsServer.server.address().port).closed
  t.match(answer, /^HTTP\/1\.1 408 /)
  t.ok(afterMs < 5000, `closed after ${afterMs} ms`)
})
