import { test } from 'tap'
import { build } from './helper.js'

test('an unknown route gets 404 in the shared error shape', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  const res = await app.inject('/nope?x=1')
  t.equal(res.statusCode, 404)
  t.match(res.headers['content-type'], 'application/json')
  t.same(res.json(), {
    statusCode: 404,
    error: 'Not Found',
    code: 'NOT_FOUND',
    message: 'No route for GET /nope',
    requestId: res.headers['x-request-id']
  })
})

test('a method the route does not serve gets the same 404', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  const res = await app.inject({ method: 'DELETE', url: '/fib?num=3' })
  t.equal(res.statusCode, 404)
  t.equal(res.json().message, 'No route for DELETE /fib')
})

test('a URL that cannot be decoded gets 400 in the shared shape, with its request id', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  const res = await app.inject({ url: '/fib%E0%A4%A?num=3', headers: { 'x-request-id': 'bad-url' } })
  t.equal(res.statusCode, 400)
  t.equal(res.headers['x-request-id'], 'bad-url')
  t.same(res.json(), {
    statusCode: 400,
    error: 'Bad Request',
    code: 'BAD_REQUEST',
    message: "'/fib%E0%A4%A?num=3' is not a valid url component",
    requestId: 'bad-url'
  })
})

test('x-request-id: a usable incoming id is echoed, else a fresh one is made', async (t) => {
  const { app, logs } = await build(t, { POOL_THREADS: '1' })
  const kept = await app.inject({ url: '/health', headers: { 'x-request-id': 'abc-123' } })
  t.equal(kept.headers['x-request-id'], 'abc-123')
  t.ok(logs.some((line) => line.reqId === 'abc-123'), 'the same id is on the log line')
  for (const unusable of ['', 'x'.repeat(129), 'has space']) {
    const res = await app.inject({ url: '/health', headers: { 'x-request-id': unusable } })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, `${JSON.stringify(unusable.slice(0, 10))} is replaced`)
  }
  const fresh = await Promise.all([app.inject('/health'), app.inject('/health')])
  t.not(fresh[0].headers['x-request-id'], fresh[1].headers['x-request-id'])
})
