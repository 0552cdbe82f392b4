// The process itself: start-up refusal of bad config, signals, drain and exit codes.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import { freePort, until, value } from '../helper.js'

const SERVER = fileURLToPath(new URL('../../src/server.js', import.meta.url))
const THROW_ON_SIGWINCH = new URL('../fixtures/throw-on-sigwinch.js', import.meta.url).href

// Starts src/server.js on a free port; resolves once it listens, with its port and log lines.
function start (t, env = {}, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, SERVER], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', POOL_THREADS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => child.kill('SIGKILL'))
  const lines = []
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  // 'close', not 'exit': by then stdout has been read to its end.
  const exited = once(child, 'close').then(([code, signal]) => ({ code, signal, stderr }))
  const listening = new Promise((resolve, reject) => {
    let pending = ''
    child.stdout.on('data', (chunk) => {
      pending += chunk
      const parts = pending.split('\n')
      pending = parts.pop()
      for (const part of parts) {
        const line = JSON.parse(part)
        lines.push(line)
        if (line.msg === 'pool ready') resolve(port(lines))
      }
    })
    exited.then(reject)
  })
  listening.catch(() => {}) // tests that expect an early exit never await it
  return { child, lines, exited, listening }
}

// Resolves once the service reports a task on a thread: the request has arrived and is computing.
const computing = (port) => until(async () => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  return value(text, 'fib_pool_busy_threads') >= 1
})

const port = (lines) => Number(lines.find((line) => line.msg.startsWith('Server listening at http://127.0.0.1:')).msg.split(':').pop())

test('bad configuration stops the process with one plain line naming the setting', async (t) => {
  const cases = {
    POOL_THREADS: ['abc', 'fib-pool: POOL_THREADS="abc" is invalid: expected a whole number from 1 to 1024\n'],
    PORT: ['notaport', 'fib-pool: PORT="notaport" is invalid: expected a whole number from 0 to 65535\n'],
    FIB_MAX_NUM: ['100', 'fib-pool: FIB_MAX_NUM="100" is invalid: expected a whole number from 0 to 78\n']
  }
  for (const [name, [value, line]] of Object.entries(cases)) {
    const { exited } = start(t, { [name]: value })
    const { code, stderr } = await exited
    t.equal(code, 1, `${name}=${value} exits 1`)
    t.equal(stderr, line, 'one line, no stack trace')
  }
})

test('SIGTERM lets an in-flight fib(40) finish with 200, then exits 0', async (t) => {
  const { child, lines, exited, listening } = start(t, { LOG_REQUESTS: 'all' })
  const port = await listening
  const pending = fetch(`http://127.0.0.1:${port}/fib?num=40`, { headers: { 'x-request-id': 'drain-1' } })
  await computing(port)
  child.kill('SIGTERM')
  const res = await pending
  t.equal(res.status, 200)
  t.match(await res.json(), { num: 40, result: 102334155 })
  const { code } = await exited
  t.equal(code, 0)
  t.same(lines.slice(2).map((line) => line.msg), ['shutting down: draining in-flight requests', 'request completed', 'shut down cleanly'])
  t.match(lines.find((line) => line.reqId === 'drain-1'), { num: 40, statusCode: 200, durationMs: Number })
})

// fib(45) is predicted to compute for 10-20 s here, and a loaded machine could put it past the
// default 30 s deadline, where it is refused at once: the tests that need a long task give it time.
const LONG_DEADLINE = { REQUEST_TIMEOUT_MS: '300000' }

test('a second signal ends the process at once', async (t) => {
  const { child, exited, listening } = start(t, LONG_DEADLINE)
  const port = await listening
  const pending = fetch(`http://127.0.0.1:${port}/fib?num=45`).catch((err) => err)
  await computing(port)
  child.kill('SIGTERM')
  await sleep(100)
  child.kill('SIGINT')
  const { code, stderr } = await exited
  t.equal(code, 1)
  t.equal(stderr, '')
  t.type(await pending, Error, 'the request in flight is cut off')
})

test('when the grace delay runs out, the process exits 1 without waiting', async (t) => {
  const { child, lines, exited, listening } = start(t, { ...LONG_DEADLINE, SHUTDOWN_GRACE_MS: '300' })
  const port = await listening
  fetch(`http://127.0.0.1:${port}/fib?num=45`).catch(() => {})
  await computing(port)
  child.kill('SIGTERM')
  const { code } = await exited
  t.equal(code, 1)
  t.ok(lines.some((line) => line.msg === 'killed by timeout (300ms)'))
})

test('an uncaught error is logged and shuts the service down, exit 1', async (t) => {
  const { child, lines, exited, listening } = start(t, {}, ['--import', THROW_ON_SIGWINCH])
  await listening
  child.kill('SIGWINCH')
  const { code } = await exited
  t.equal(code, 1)
  t.match(lines.find((line) => line.level === 50), { msg: 'shutting down after an uncaught error', err: { message: 'boom from a test' } })
})

test('a port already taken, PORT or METRICS_PORT, is one fatal log line naming it and exit 1', async (t) => {
  const taken = createServer()
  await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => taken.close())
  for (const setting of ['PORT', 'METRICS_PORT']) {
    const { lines, exited } = start(t, { [setting]: String(taken.address().port) })
    t.equal((await exited).code, 1, setting)
    t.match(lines.at(-1), { level: 60, msg: `cannot listen on 127.0.0.1:${taken.address().port}`, err: { code: 'EADDRINUSE' } })
  }
})

test('METRICS_PORT serves the metrics on a listener of its own as well, open until the drain ends', async (t) => {
  const metricsPort = await freePort()
  const { child, exited, listening } = start(t, { METRICS_PORT: String(metricsPort) })
  const port = await listening
  const own = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
  t.equal(own.status, 200)
  t.equal(value(await own.text(), 'fib_pool_threads'), 1)
  t.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200, 'still on the main port too')
  const other = await fetch(`http://127.0.0.1:${metricsPort}/fib?num=3`)
  t.equal(other.status, 404, 'nothing but the metrics there')
  t.match(await other.json(), { code: 'NOT_FOUND' })
  const pending = fetch(`http://127.0.0.1:${port}/fib?num=40`)
  await computing(port)
  child.kill('SIGTERM')
  await until(() => fetch(`http://127.0.0.1:${port}/health`).then(() => false, () => true))
  const during = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
  t.equal(value(await during.text(), 'fib_pool_busy_threads'), 1, 'the drain can be watched: the main port is closed, the metrics port is not')
  t.equal((await pending).status, 200)
  t.equal((await exited).code, 0)
})

test('on a terminal the log lines are pretty, not JSON', async (t) => {
  // script(1) gives the server a pseudo-terminal as its stdout.
  const child = spawn('script', ['-qec', `${process.execPath} ${SERVER}`, '/dev/null'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', POOL_THREADS: '1' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => child.kill('SIGKILL'))
  let output = ''
  await new Promise((resolve) => child.stdout.on('data', (chunk) => {
    output += chunk
    if (output.includes('pool ready')) resolve()
  }))
  t.match(output, /INFO.*pool ready/)
  t.notMatch(output, '{"level"')
  child.kill('SIGTERM')
  t.equal((await once(child, 'exit'))[0], 0)
})
