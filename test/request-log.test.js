import { test } from 'tap'
import { MAX_LOGGED_URL } from '../src/request-log.js'
import { build } from './helper.js'

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
