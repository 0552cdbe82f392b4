import { test } from 'tap'
import { MAX_LOGGED_URL } from '../src/request-log.js'
import { build as buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { BARE, build } from './helper.js'

const POLLS = ['/health', '/ready', '/metrics']
const ALL = { LOG_REQUESTS: 'all' }
const completed = (logs) => logs.filter((line) => line.msg === 'request completed')

test('by default only a request answered 400 or more has a line: answers cost no logging', async (t) => {
  const { app, logs } = await build(t, { POOL_THREADS: '1' })
  const urls = ['/fib?num=20', '/fib?num=3', '/fib?num=x', '/nowhere', '/fib?num=99', ...POLLS]
  for (const url of urls) await app.inject({ url, headers: { 'x-request-id': url } })
  app.closing = true
  t.equal((await app.inject({ url: '/fib?num=20', headers: { 'x-request-id': 'closing' } })).statusCode, 503)
  t.same(completed(logs).map((line) => [line.reqId, line.statusCode]),
    [['/fib?num=x', 400], ['/nowhere', 404], ['/fib?num=99', 400], ['closing', 503]])
})

test('by default a request that fails in the service has its line, besides the error\'s own', async (t) => {
  const { app, logs } = await build(t, { POOL_THREADS: '1' })
  app.get('/test/broken', async () => { throw new Error('broken') })
  t.equal((await app.inject({ url: '/test/broken', headers: { 'x-request-id': 'broken' } })).statusCode, 500)
  t.match(logs.filter((line) => line.reqId === 'broken'), [
    { level: 50, msg: 'request failed', err: { message: 'broken' } },
    { level: 30, msg: 'request completed', statusCode: 500, url: '/test/broken' }
  ])
})

test('by default a failing poll has its line at debug, and none at info', async (t) => {
  for (const level of ['info', 'debug']) {
    const { app, logs } = await build(t, { POOL_THREADS: '1' }, { level })
    await app.inject('/ready')
    app.closing = true
    t.equal((await app.inject({ url: '/ready', headers: { 'x-request-id': 'closing' } })).statusCode, 503)
    t.same(completed(logs).map((line) => [line.reqId, line.level]), level === 'debug' ? [['closing', 20]] : [], level)
  }
})

test('at info, polls write no line: probes and scrapes every few seconds would bury the requests', async (t) => {
  const { app, logs } = await build(t, ALL)
  for (const url of [...POLLS, '/fib?num=20', '/nowhere']) await app.inject({ url, headers: { 'x-request-id': url } })
  t.same(completed(logs).map((line) => line.reqId), ['/fib?num=20', '/nowhere'])
})

test('at debug, each poll has its line, at debug, failing ones too', async (t) => {
  const { app, logs } = await build(t, ALL, { level: 'debug' })
  for (const url of [...POLLS, '/fib?num=20']) await app.inject({ url, headers: { 'x-request-id': url } })
  app.closing = true
  const notReady = await app.inject({ url: '/ready', headers: { 'x-request-id': 'closing' } })
  t.equal(notReady.statusCode, 503)
  const levels = Object.fromEntries(completed(logs).map((line) => [line.reqId, line.level]))
  t.same(levels, { '/health': 20, '/ready': 20, '/metrics': 20, '/fib?num=20': 30, closing: 20 })
})

test('at warn, no request writes a line, polls or work, answered or refused', async (t) => {
  const { app, logs } = await build(t, ALL, { level: 'warn' })
  for (const url of [...POLLS, '/fib?num=20', '/fib?num=x', '/nowhere']) await app.inject(url)
  t.same(completed(logs), [])
})

test('a long URL is logged cut short, with its length: a client cannot write lines of any size', async (t) => {
  const { app, logs } = await build(t)
  const url = `/fib?num=${'9'.repeat(5000)}`
  t.equal((await app.inject({ url, headers: { 'x-request-id': 'long' } })).statusCode, 400)
  const line = completed(logs).find((l) => l.reqId === 'long')
  t.equal(line.url, `${url.slice(0, MAX_LOGGED_URL)}... (5009 characters)`)
  t.ok(JSON.stringify(logs.filter((l) => l.reqId === 'long')).length < 2000, 'no line of the request carries the query')
  await app.inject({ url: '/fib?num=x', headers: { 'x-request-id': 'short' } })
  t.equal(logs.find((l) => l.reqId === 'short').url, '/fib?num=x', 'a URL of usual length is logged as it is')
})

test('a URL of exactly the longest logged length is logged whole', async (t) => {
  const { app, logs } = await build(t)
  const url = `/fib?num=${'9'.repeat(MAX_LOGGED_URL - '/fib?num='.length)}`
  t.equal(url.length, MAX_LOGGED_URL)
  await app.inject({ url, headers: { 'x-request-id': 'edge' } })
  t.equal(completed(logs).find((l) => l.reqId === 'edge').url, url)
})

test('a fib request\'s line carries its num once valid, and none otherwise', async (t) => {
  const { app, logs } = await build(t, ALL)
  await app.inject({ url: '/fib?num=20', headers: { 'x-request-id': 'valid' } })
  await app.inject({ url: '/fib?num=abc', headers: { 'x-request-id': 'invalid' } })
  const line = (id) => completed(logs).find((l) => l.reqId === id)
  t.equal(line('valid').num, 20)
  t.notOk('num' in line('invalid'), 'a num that failed validation is not logged as one')
})

test('without a logger option the app logs at LOG_LEVEL', async (t) => {
  const app = await buildApp(loadConfig({ POOL_THREADS: '1', LOG_LEVEL: 'warn' }), { execArgv: BARE })
  t.teardown(() => app.close())
  t.equal(app.log.level, 'warn')
})

test('no line carries a request\'s Authorization or Cookie header', async (t) => {
  const { app, logs } = await build(t, ALL, { level: 'trace' })
  for (const url of ['/fib?num=20', '/fib?num=x', '/nowhere']) {
    await app.inject({ url, headers: { authorization: 'Bearer secret-token', cookie: 'session=secret-cookie' } })
  }
  t.ok(logs.length >= 3)
  t.notMatch(JSON.stringify(logs), /secret/)
})
