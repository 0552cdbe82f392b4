// k6/smoke.js: a seconds-long end-to-end check of the API, for CI and after a deploy.
//
//   k6 run k6/smoke.js                              # against http://localhost:3000
//   k6 run -e BASE_URL=https://fib.example.internal k6/smoke.js
import http from 'k6/http'
import { check } from 'k6'
import { BASE_URL, json } from './lib/service.js'

export const options = {
  vus: 1,
  iterations: 1,
  // Every check must hold; any unexpected status counts as a failed request.
  thresholds: { checks: ['rate==1'], http_req_failed: ['rate==0'] }
}

const expect = (...statuses) => ({ responseCallback: http.expectedStatuses(...statuses) })

export default function () {
  const health = http.get(`${BASE_URL}/health`)
  check(health, { '/health is 200 ok': (r) => r.status === 200 && json(r).status === 'ok' })

  const ready = http.get(`${BASE_URL}/ready`)
  check(ready, { '/ready is 200 ready': (r) => r.status === 200 && json(r).status === 'ready' })

  const fib = http.get(`${BASE_URL}/fib?num=25`, { headers: { 'x-request-id': 'k6-smoke-1' } })
  check(fib, {
    'fib(25) is 75025': (r) => r.status === 200 && json(r).result === 75025 && json(r).num === 25,
    'fib says which thread computed it and for how long': (r) => Number.isInteger(json(r).threadId) && json(r).computeMs >= 0,
    'the request id is echoed': (r) => r.headers['X-Request-Id'] === 'k6-smoke-1'
  })

  const bad = http.get(`${BASE_URL}/fib?num=1e2`, expect(400))
  check(bad, {
    'num=1e2 is 400 FIB_NUM_INVALID with a message': (r) => r.status === 400 && json(r).code === 'FIB_NUM_INVALID' && /plain decimal/.test(json(r).message)
  })

  const missing = http.get(`${BASE_URL}/no-such-route`, expect(404))
  check(missing, { 'an unknown route is 404 in the error shape': (r) => r.status === 404 && json(r).code === 'NOT_FOUND' && json(r).requestId !== undefined })

  const metrics = http.get(`${BASE_URL}/metrics`)
  check(metrics, { '/metrics exposes the pool': (r) => r.status === 200 && /^fib_pool_threads \d+$/m.test(r.body) })

  const docs = http.get(`${BASE_URL}/docs/json`)
  check(docs, { '/docs serves the OpenAPI 3.1 contract': (r) => r.status === 200 && json(r).openapi === '3.1.0' })
}
