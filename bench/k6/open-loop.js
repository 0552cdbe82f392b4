// The open-loop load of `npm run bench`: requests arrive at RATE per second whatever the answers
// do (k6's constant-arrival-rate, evenly spaced), the i-th request's num drawn from MIX by a
// generator seeded with SEED and i (bench/k6/mix.js: the same tasks in the same order for every
// server given the same SEED); latency of the 200s per num, and the count of everything else,
// written as JSON to OUT. With VUS in place of RATE, the same mix closed-loop: VUS clients each
// sending its next request when the last is answered, which measures what a server carries.
import exec from 'k6/execution'
import http from 'k6/http'
import { Counter, Trend } from 'k6/metrics'
import { mixSequence } from './mix.js'

const BASE_URL = __ENV.BASE_URL
const RATE = Number(__ENV.RATE)
const VUS = Number(__ENV.VUS)
const DURATION = __ENV.DURATION
// [[num, share], ...], shares summing to 1.
const MIX = JSON.parse(__ENV.MIX)
const OUT = __ENV.OUT
// Which draw of MIX: one per round of the benchmark, the same for every server in it.
const SEED = Number(__ENV.SEED || 0)
// Enough VUs for a server whose answers take seconds: rate x latency are in flight at once.
const MAX_VUS = Number(__ENV.MAX_VUS || 3000)

const latency = {}
const ok = {}
const notOk = {}
for (const [num] of MIX) {
  latency[num] = new Trend(`latency_${num}`, true)
  ok[num] = new Counter(`ok_${num}`)
  notOk[num] = new Counter(`not_ok_${num}`)
}
const latencyAll = new Trend('latency_all', true)
// A refusal must be fast and say when to retry.
const refused = new Trend('refused_latency', true)
const refusedWithoutRetryAfter = new Counter('refused_without_retry_after')

const scenario = VUS > 0
  ? { executor: 'constant-vus', vus: VUS, duration: DURATION, gracefulStop: '60s' }
  : {
      executor: 'constant-arrival-rate',
      rate: RATE,
      timeUnit: '1s',
      duration: DURATION,
      preAllocatedVUs: Math.min(MAX_VUS, Math.ceil(RATE / 2) + 20),
      maxVUs: MAX_VUS,
      gracefulStop: '60s'
    }

export const options = {
  scenarios: { load: scenario },
  summaryTrendStats: ['med', 'p(99)', 'p(99.9)', 'max', 'count']
}

const numAt = mixSequence(MIX, SEED)

export default function () {
  const num = numAt(exec.scenario.iterationInTest)
  const res = http.get(`${BASE_URL}/fib?num=${num}`, { responseCallback: http.expectedStatuses(200, 503), tags: { name: 'fib' } })
  if (res.status === 200) {
    ok[num].add(1)
    latency[num].add(res.timings.duration)
    latencyAll.add(res.timings.duration)
  } else {
    notOk[num].add(1, { status: String(res.status) })
    if (res.status === 503) {
      refused.add(res.timings.duration)
      if (!(Number(res.headers['Retry-After']) >= 1)) refusedWithoutRetryAfter.add(1)
    }
  }
}

export function handleSummary (data) {
  const m = data.metrics
  const stats = (name) => {
    const v = m[name]?.values
    return v && { p50: v.med, p99: v['p(99)'], p999: v['p(99.9)'], max: v.max }
  }
  const count = (name) => m[name]?.values.count ?? 0
  const summary = {
    rate: RATE,
    all: stats('latency_all'),
    dropped: count('dropped_iterations'),
    refused: { ...stats('refused_latency'), count: count('refused_latency'), withoutRetryAfter: count('refused_without_retry_after') },
    classes: Object.fromEntries(MIX.map(([num]) => [num, { ...stats(`latency_${num}`), ok: count(`ok_${num}`), notOk: count(`not_ok_${num}`) }]))
  }
  return { [OUT]: JSON.stringify(summary) }
}
