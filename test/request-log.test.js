import { test } from 'tap'
import { MAX_LOGGED_URL } from '../src/request-log.js'
import { build as buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { BARE, build } from './helper.js'

const POLLS = ['/health', '/ready', '/metrics']

test('at info, polls write no line: probes and scrapes every few seconds would bury the requests', async (t) => {
  const { app, logs } = await build(t)
  for (const url of [...POLLS, '/fib?num=20', '/nowhere']) await app.inject({ url, headers: { 'x-request-id': url } })
  t.same(logs.filter((line) => line.msg === 'request completed').map((line) => line.reqId), ['/fib?num=20', '/nowhere'])
})

test('at debug, each poll has its line, at debug, failing ones too', async (t) => {
  const { app, logs } = await build(t, {}, { level: 'debug' })
  for (const url of [...POLLS, '/fib?num=20']) await app.inject({ url, headers: { 'x-request-id': url } })
  app.closing = true
  const notReady = await app.inject({ url: '/ready', headers: { 'x-request-id': 'closing' } })
  t.equal(notReady.statusCode, 503)
  const levels = Object.fromEntries(logs.filter((line) => line.msg === 'request completed').map((line) => [line.reqId, line.level]))
  t.same(levels, { '/health': 20, '/ready': 20, '/metrics': 20, '/fib?num=20': 30, closing: 20 })
})

test('at warn, no request writes a line, polls or work, answered or refused', async (t) => {
  const { app, logs } = await build(t, {}, { level: 'warn' })
  for (const url of [...POLLS, '/fib?num=20', '/fib?num=x', '/nowhere']) await app.inject(url)
  t.same(logs.filter((line) => line.msg === 'request completed'), [])
})

test('a long URL is logged cut short, with its length: a client cannot write lines of any size', async (t) => {
  const { app, logs } = await build(t)
  const url = `/fib?num=${'9'.repeat(5000)}`
  t.equal((await app.inject({ url, headers: { 'x-request-id': 'long' } })).statusCode, 400)
  const line = logs.find((l) => l.reqId === 'long' && l.msg === 'request completed')
  t.equal(line.url, `${url.slice(0, MAX_LOGGED_URL)}... (5009 characters)`)
  t.ok(JSON.stringify(logs.filter((l) => l.reqId === 'long')).length < 2000, 'no line of the request carries the query')
  await app.inject({ url: '/fib?num=20', headers: { 'x-request-id': 'short' } })
  t.equal(logs.find((l) => l.reqId === 'short').url, '/fib?num=20', 'a URL of usual length is logged as it is')
})

test('a URL of exactly the longest logged length is logged whole', async (t) => {
  const { app, logs } = await build(t)
  const url = `/fib?num=${'9'.repeat(MAX_LOGGED_URL - '/fib?num='.length)}`
  t.equal(url.length, MAX_LOGGED_URL)
  await app.inject({ url, headers: { 'x-request-id': 'edge' } })
  t.equal(logs.find((l) => l.reqId === 'edge' && l.msg === 'request completed').url, url)
})

test('a fib request\'s line carries its num once valid, and none otherwise', async (t) => {
  const { app, logs } = await build(t)
  await app.inject({ url: '/fib?num=20', headers: { 'x-request-id': 'valid' } })
  await app.inject({ url: '/fib?num=abc', headers: { 'x-request-id': 'invalid' } })
  const line = (id) => logs.find((l) => l.reqId === id && l.msg === 'request completed')
  t.equal(line('valid').num, 20)
  t.notOk('num' in line('invalid'), 'a num that failed validation is not logged as one')
})

test('without a logger option the app logs at LOG_LEVEL', async (t) => {
  const app = await buildApp(loadConfig({ POOL_THREADS: '1', LOG_LEVEL: 'warn' }), { execArgv: BARE })
  t.teardown(() => app.close())
  t.equal(app.log.level, 'warn')
})

test('no line carries a request\'s Authorization or Cookie header', async (t) => {
  const { app, logs } = await build(t, {}, { level: 'trace' })
  for (const url of ['/fib?num=20', '/fib?num=x', '/nowhere']) {
    await app.inject({ url, headers: { authorization: 'Bearer secret-token', cookie: 'session=secret-cookie' } })
  }
  t.ok(logs.length >= 3)
  t.notMatch(JSON.stringify(logs), /secret/)
})
