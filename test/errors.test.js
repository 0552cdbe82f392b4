import { test } from 'tap'
import { build } from './helper.js'
import { FibNumInvalid, QueueFull } from '../src/errors.js'

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

test('a method a known path does not serve gets 405 with Allow, in the shared shape', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  for (const [method, url, path] of [['POST', '/fib?num=3', '/fib'], ['DELETE', '/health', '/health'], ['TRACE', '/metrics', '/metrics'], ['PUT', '/ready', '/ready']]) {
    const res = await app.inject({ method, url })
    t.equal(res.statusCode, 405, `${method} ${path}`)
    t.equal(res.headers.allow, 'GET, HEAD')
    t.same(res.json(), {
      statusCode: 405,
      error: 'Method Not Allowed',
      code: 'METHOD_NOT_ALLOWED',
      message: `${method} is not allowed on ${path}: use GET or HEAD`,
      requestId: res.headers['x-request-id']
    })
  }
  const unknown = await app.inject({ method: 'POST', url: '/nope' })
  t.equal(unknown.statusCode, 404, 'an unknown path stays 404')
  t.notOk('allow' in unknown.headers)
})

test('405 and 404 come before anything looks at the body or its headers', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  const json = { 'content-type': 'application/json' }
  for (const path of ['/fib', '/health', '/ready', '/metrics']) {
    for (const request of [
      { method: 'QUERY' },
      { method: 'QUERY', headers: json, payload: '{}' },
      { method: 'PATCH' },
      { method: 'PROPFIND', headers: json, payload: '{}' },
      { method: 'POST', headers: json, payload: '{broken' },
      { method: 'PUT', headers: { 'content-type': 'application/x-unknown' }, payload: 'x' },
      { method: 'POST', headers: json, payload: `"${'x'.repeat(2 ** 21)}"` }
    ]) {
      const res = await app.inject({ ...request, url: path })
      const what = `${request.method} ${path} ${request.headers?.['content-type'] ?? 'without Content-Type'}`
      t.equal(res.statusCode, 405, what)
      t.equal(res.headers.allow, 'GET, HEAD', what)
      t.equal(res.json().code, 'METHOD_NOT_ALLOWED', what)
    }
  }
  const unknown = await app.inject({ method: 'QUERY', url: '/nope' })
  t.equal(unknown.statusCode, 404, 'QUERY on an unknown path: 404')
  const broken = await app.inject({ method: 'POST', url: '/nope', headers: json, payload: '{broken' })
  t.equal(broken.statusCode, 404, 'a broken body to an unknown path: 404')
})

test('client errors Fastify raises itself on a route are 4xx in the shared shape, logged at info, never a 500', async (t) => {
  const { app, logs } = await build(t, { POOL_THREADS: '1' })
  // Every route of the service is a GET, whose body Fastify never reads: a route that takes one
  // stands for a user's own.
  app.post('/echo', async (request) => request.body)
  const json = { 'content-type': 'application/json' }
  const cases = [
    [{ method: 'POST', url: '/echo', headers: json, payload: '{broken' }, 400, 'BAD_REQUEST', /not valid JSON/],
    [{ method: 'POST', url: '/echo', headers: { 'content-type': 'application/x-unknown' }, payload: 'x' }, 415, 'UNSUPPORTED_MEDIA_TYPE', /Unsupported Media Type/],
    [{ method: 'POST', url: '/echo', headers: json, payload: `"${'x'.repeat(2 ** 21)}"` }, 413, 'BODY_TOO_LARGE', /too large/]
  ]
  for (const [request, status, code, message] of cases) {
    const id = `client-${status}-${code}`
    const res = await app.inject({ ...request, headers: { ...request.headers, 'x-request-id': id } })
    t.equal(res.statusCode, status, `${request.method} ${request.url}: ${status}`)
    t.match(res.json(), { statusCode: status, code, message, requestId: id })
    t.notOk('retry-after' in res.headers)
    t.notOk(logs.some((line) => line.reqId === id && line.level > 30), 'nothing logged above info')
    t.ok(logs.some((line) => line.reqId === id && line.level === 30 && line.msg === 'client error' && line.err.code !== undefined && line.err.message !== undefined),
      'logged at info, with its code and message')
  }
})

test('a body sent with a GET is ignored: the routes take none', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  const res = await app.inject({ method: 'GET', url: '/fib?num=10', headers: { 'content-type': 'application/json' }, payload: '{broken' })
  t.equal(res.statusCode, 200)
  t.equal(res.json().result, 55)
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
  const { app, logs } = await build(t, { POOL_THREADS: '1', LOG_REQUESTS: 'all' })
  const kept = await app.inject({ url: '/fib?num=3', headers: { 'x-request-id': 'abc-123' } })
  t.equal(kept.headers['x-request-id'], 'abc-123')
  t.ok(logs.some((line) => line.reqId === 'abc-123'), 'the same id is on the log line')
  for (const unusable of ['', 'x'.repeat(129), 'has space']) {
    const res = await app.inject({ url: '/health', headers: { 'x-request-id': unusable } })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, `${JSON.stringify(unusable.slice(0, 10))} is replaced`)
  }
  const fresh = await Promise.all([app.inject('/health'), app.inject('/health')])
  t.not(fresh[0].headers['x-request-id'], fresh[1].headers['x-request-id'])
})

test('an error a library raises with a status that is no client error (5xx, or below 400) is ours to fix: 500 INTERNAL_ERROR, logged at error, no internals', async (t) => {
  const { app, logs } = await build(t, { POOL_THREADS: '1' })
  const statuses = [302, 500, 502]
  for (const status of statuses) {
    app.get(`/test/library-${status}`, async () => { throw Object.assign(new Error('upstream detail'), { statusCode: status }) })
  }
  for (const status of statuses) {
    const id = `library-${status}`
    const res = await app.inject({ url: `/test/library-${status}`, headers: { 'x-request-id': id } })
    t.equal(res.statusCode, 500)
    t.match(res.json(), { statusCode: 500, code: 'INTERNAL_ERROR', requestId: id })
    t.notMatch(res.body, 'upstream detail')
    t.ok(logs.some((line) => line.reqId === id && line.level === 50 && line.msg === 'request failed' && line.err.message === 'upstream detail'), 'logged at error, in full')
  }
})

test('a refusal is an answer, not a bug: it carries no stack trace, so a flood of them costs no stack capture each', async (t) => {
  t.equal(new QueueFull(2, 64).stack, undefined)
  t.equal(new FibNumInvalid('num is missing').stack, undefined)
  t.type(new Error('a bug').stack, 'string', 'where an ordinary error has one')
})
