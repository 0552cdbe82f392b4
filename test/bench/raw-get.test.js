import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import { test } from 'tap'
import { Connections, bodyOf } from '../../bench/raw-get.js'

// A raw TCP server on a free port: `answer(socket, request text)` writes what it likes. Counts
// the connections it accepted.
async function rawServer (t, answer) {
  const seen = { connections: 0 }
  const server = net.createServer((socket) => {
    seen.connections++
    socket.setEncoding('latin1')
    socket.on('data', (text) => answer(socket, text))
    socket.on('error', () => {})
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  seen.port = server.address().port
  return seen
}

const connectionsTo = (t, port, timeoutMs = 5000) => {
  const connections = new Connections(port, timeoutMs)
  t.teardown(() => connections.destroy())
  return connections
}

test('bodyOf: by Content-Length, or by chunks, once it is whole', async (t) => {
  const sized = 'HTTP/1.1 200 OK\r\ncontent-length: 5'
  t.equal(bodyOf(sized, `${sized}\r\n\r\nhel`, sized.length + 4), undefined, 'short: not yet')
  t.equal(bodyOf(sized, `${sized}\r\n\r\nhello`, sized.length + 4), 'hello')
  const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked'
  const whole = `${chunked}\r\n\r\n5\r\nhello\r\na\r\n, world!!!\r\n0\r\n\r\n`
  for (let end = chunked.length + 4; end < whole.length; end++) {
    if (bodyOf(chunked, whole.slice(0, end), chunked.length + 4) !== undefined) t.fail(`whole at ${end} of ${whole.length}`)
  }
  t.equal(bodyOf(chunked, whole, chunked.length + 4), 'hello, world!!!', 'every chunk, only when all came')
  const neither = 'HTTP/1.1 200 OK\r\nconnection: close'
  t.throws(() => bodyOf(neither, `${neither}\r\n\r\nhi`, neither.length + 4, '/fib?num=1'), /GET \/fib\?num=1 has neither Content-Length nor chunks/)
})

test('an answer: its status, when it was sent, how long it took, Retry-After, the body of a 200 when asked', async (t) => {
  let n = 0
  const s = http.createServer((req, res) => {
    if (n++ % 2 === 0) return setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(`{"url":"${req.url}"}`), 30)
    res.writeHead(503, { 'retry-after': '3' }).end('{}')
  })
  s.listen(0, '127.0.0.1')
  await once(s, 'listening')
  t.teardown(() => s.close())
  const connections = connectionsTo(t, s.address().port)
  const before = Date.now()
  const ok = await connections.get('/fib?num=7', true)
  t.match(ok, { status: 200, body: '{"url":"/fib?num=7"}' })
  t.ok(ok.ms >= 29 && ok.at >= before - 1 && ok.at <= before + 20, `sent at once, answered 30 ms later (${ok.ms})`)
  const refused = await connections.get('/', true)
  t.match(refused, { status: 503, retryAfter: 3 })
  t.equal(refused.body, undefined, 'no body of a 503, even asked')
  t.same(Object.keys(await connections.get('/', false)).sort(), ['at', 'ms', 'retryAfter', 'status'], 'nor of a 200 unless asked')
})

test('a socket is kept for the next request, one request on it at a time', async (t) => {
  const seen = await rawServer(t, (socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'))
  const connections = connectionsTo(t, seen.port)
  for (let i = 0; i < 5; i++) t.match(await connections.get('/', false), { status: 200 })
  t.equal(seen.connections, 1, 'five in turn: one socket')
  await Promise.all([1, 2, 3].map(() => connections.get('/', false)))
  t.equal(seen.connections, 3, 'three at once: two more')
})

test('an answer in pieces is read whole', async (t) => {
  const answer = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'
  const seen = await rawServer(t, (socket) => {
    let i = 0
    const next = () => i < answer.length && socket.write(answer[i++], () => setTimeout(next, 1))
    next()
  })
  t.match(await connectionsTo(t, seen.port).get('/', true), { status: 200, body: 'ok' })
})

test('connection: close, and stray bytes, take the socket out of use', async (t) => {
  const seen = await rawServer(t, (socket, text) => {
    if (text.startsWith('GET /close')) return socket.write('HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
    socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')
    if (text.startsWith('GET /stray')) setTimeout(() => socket.write('HTTP/1.1 408 Request Timeout\r\n\r\n'), 20)
  })
  const connections = connectionsTo(t, seen.port)
  t.match(await connections.get('/close', false), { status: 503 })
  t.match(await connections.get('/', false), { status: 200 })
  t.equal(seen.connections, 2, 'a new socket after connection: close')
  t.match(await connections.get('/stray', false), { status: 200 })
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.match(await connections.get('/', false), { status: 200 })
  t.equal(seen.connections, 3, 'and after bytes no request waited for')
})

test('no whole answer is status 0: the socket closed, timed out, or was destroyed', async (t) => {
  const seen = await rawServer(t, (socket, text) => {
    if (text.startsWith('GET /hang-up')) return socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort')
    if (text.startsWith('GET /ok')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')
  })
  const connections = connectionsTo(t, seen.port, 100)
  t.match(await connections.get('/hang-up', false), { status: 0 })
  const silent = await connections.get('/silent', false)
  t.ok(silent.status === 0 && silent.ms >= 99, `no answer within the timeout (${silent.ms} ms)`)
  t.match(await connections.get('/ok', false), { status: 200 }, 'a fresh socket for the next')
  const pending = connections.get('/silent', false)
  connections.destroy()
  t.match(await pending, { status: 0 }, 'destroy() answers what waits')
})
