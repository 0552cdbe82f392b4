// k6/scaling.js: does throughput grow with the pool's threads while the main thread stays free?
//
//   k6 run k6/scaling.js                                   # against http://localhost:3000
//   k6 run -e STEP_SECONDS=20 -e NUM=35 k6/scaling.js
//
// Steps the concurrency 1, 2, ... up to THREADS and on to 2 x THREADS, then 1 again, measures each
// step, prints a table, writes it as JSON, and exits non-zero when the speed-up at THREADS is below
// SPEEDUP_FLOOR x THREADS (exit 110), when throughput beyond THREADS falls below BEYOND_FLOOR x
// its peak (110), when any request fails (99), or when /health's p99 exceeds HEALTH_P99_MS (99).
// The speed-up is over the faster of the two concurrency-1 steps, so a slow moment on a shared
// machine during one of them cannot flatter it.
import http from 'k6/http'
import exec from 'k6/execution'
import { sleep } from 'k6'
import { Counter, Gauge, Trend } from 'k6/metrics'
import { BASE_URL, metric, sleepUntil } from './lib/service.js'

const STEP_SECONDS = Number(__ENV.STEP_SECONDS || 10)
// fib(34): about 55 ms of CPU. Beside it the HTTP round trip and the thread hand-off are small,
// so one thread cannot look like two. With shorter tasks a single thread gains from a second
// client (its next task starts while the answer travels): speed-ups of 1.42-1.50 at fib(30),
// up to 1.35 at fib(32), 0.95-1.07 at fib(34) (docs/benchmarks.md).
const NUM = Number(__ENV.NUM || 34)
// The concurrency at which every CPU should be busy; default: the CPUs the service may use.
const THREADS = Number(__ENV.THREADS || 0)
// Upper bound on THREADS, for the VUs k6 must allocate up front (2 per thread).
const MAX_THREADS = Number(__ENV.MAX_THREADS || 32)
const SPEEDUP_FLOOR = Number(__ENV.SPEEDUP_FLOOR || 0.8)
const BEYOND_FLOOR = Number(__ENV.BEYOND_FLOOR || 0.8)
// The start of each step not measured, while the new VU's first requests settle in.
const SETTLE_SECONDS = Number(__ENV.SETTLE_SECONDS || 1)
const HEALTH_RATE = Number(__ENV.HEALTH_RATE || 5)
const HEALTH_P99_MS = Number(__ENV.HEALTH_P99_MS || 10)
const SUMMARY_JSON = __ENV.SUMMARY_JSON || 'scaling-summary.json'

// Steps 1 .. 2 x THREADS, then one more at concurrency 1.
const MAX_STEPS = 2 * MAX_THREADS + 1
const maxDuration = `${MAX_STEPS * STEP_SECONDS + 60}s`
// One metric per step (sub-metrics of a tag only reach the summary when a threshold names them).
const stepRps = []
const stepDuration = []
const stepErrors = []
for (let step = 1; step <= MAX_STEPS; step++) {
  stepRps[step] = new Gauge(`scaling_step_${step}_rps`)
  stepDuration[step] = new Trend(`scaling_step_${step}_duration`, true)
  stepErrors[step] = new Counter(`scaling_step_${step}_errors`)
}
const threadsGauge = new Gauge('scaling_threads')

export const options = {
  scenarios: {
    load: { executor: 'per-vu-iterations', vus: 2 * MAX_THREADS, iterations: 1, maxDuration, exec: 'load' },
    meter: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration, exec: 'meter' },
    health: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration, exec: 'health' }
  },
  thresholds: {
    http_req_failed: ['rate==0'],
    'http_req_duration{probe:health}': [`p(99)<${HEALTH_P99_MS}`]
  },
  summaryTrendStats: ['med', 'p(95)', 'p(99)', 'max']
}

export function setup () {
  const metrics = http.get(`${BASE_URL}/metrics`, { tags: { probe: 'meter' } })
  if (metrics.status !== 200) exec.test.abort(`GET ${BASE_URL}/metrics answered ${metrics.status}`)
  const poolThreads = metric(metrics.body, 'fib_pool_threads')
  const cpus = metric(metrics.body, 'fib_pool_available_cpus')
  const threads = THREADS || cpus
  if (threads > MAX_THREADS) exec.test.abort(`THREADS=${threads} is above MAX_THREADS=${MAX_THREADS}: raise MAX_THREADS`)
  for (let i = 0; i < 10; i++) http.get(`${BASE_URL}/fib?num=${NUM}`, { tags: { probe: 'warmup' } })
  console.log(`service: ${poolThreads} pool threads, ${cpus} CPUs; stepping 1..${2 * threads} x ${STEP_SECONDS} s of fib(${NUM})`)
  // Every scenario aligns its steps on this instant.
  return { threads, poolThreads, cpus, start: Date.now() + 1000 }
}

const stepAt = ({ start }, now) => Math.floor((now - start) / (STEP_SECONDS * 1000)) + 1

// The n-th VU of this scenario joins at step n: step s <= 2 x THREADS runs s requests at a time.
// The first VU alone stays for the last step, concurrency 1 again.
export function load (data) {
  const steps = 2 * data.threads
  // One iteration per VU, so the scenario's iteration number ranks the VU.
  const rank = exec.scenario.iterationInTest + 1
  if (rank > steps) return
  const end = data.start + (rank === 1 ? steps + 1 : steps) * STEP_SECONDS * 1000
  sleepUntil(data.start + (rank - 1) * STEP_SECONDS * 1000)
  while (Date.now() < end) {
    const sent = Date.now()
    const res = http.get(`${BASE_URL}/fib?num=${NUM}`, { tags: { probe: 'load' } })
    const step = stepAt(data, sent)
    const intoStep = sent - data.start - (step - 1) * STEP_SECONDS * 1000
    if (intoStep < SETTLE_SECONDS * 1000) continue
    stepDuration[step].add(res.timings.duration)
    if (res.status !== 200) stepErrors[step].add(1)
  }
}

// Counts completed tasks on the service itself over each step's measured window.
export function meter (data) {
  const steps = 2 * data.threads + 1
  const rps = []
  for (let step = 1; step <= steps; step++) {
    const from = data.start + ((step - 1) * STEP_SECONDS + SETTLE_SECONDS) * 1000
    sleepUntil(from)
    const before = completed()
    sleepUntil(data.start + step * STEP_SECONDS * 1000)
    const after = completed()
    rps[step] = (after.count - before.count) / ((after.at - before.at) / 1000)
    stepRps[step].add(rps[step])
  }
  threadsGauge.add(data.threads)
  const { failures } = judge(data.threads, rps)
  for (const failure of failures) exec.test.fail(failure)
}

function completed () {
  const res = http.get(`${BASE_URL}/metrics`, { tags: { probe: 'meter' } })
  return { count: metric(res.body, 'fib_pool_tasks_completed_total'), at: Date.now() }
}

// A light probe of /health for the whole run: the main thread must answer while all cores compute.
export function health (data) {
  const end = data.start + (2 * data.threads + 1) * STEP_SECONDS * 1000
  sleepUntil(data.start)
  while (Date.now() < end) {
    http.get(`${BASE_URL}/health`, { tags: { probe: 'health' } })
    sleep(1 / HEALTH_RATE)
  }
}

// The verdict, from the per-step throughput: used by the meter (exit code) and the summary (table).
// rps[1 .. 2 x threads] are the rising steps, rps[2 x threads + 1] concurrency 1 again.
function judge (threads, rps) {
  const failures = []
  const last = 2 * threads
  const baseline = Math.max(rps[1], rps[last + 1])
  const speedup = (step) => rps[step] / baseline
  const atThreads = speedup(threads)
  if (!(atThreads >= SPEEDUP_FLOOR * threads)) {
    failures.push(`speed-up at ${threads} concurrent is ${atThreads.toFixed(2)}, below ${SPEEDUP_FLOOR} x ${threads} = ${(SPEEDUP_FLOOR * threads).toFixed(2)}`)
  }
  const peak = Math.max(...rps.slice(1, last + 1))
  for (let step = threads + 1; step <= last; step++) {
    if (!(rps[step] >= BEYOND_FLOOR * peak)) {
      failures.push(`throughput at ${step} concurrent is ${rps[step].toFixed(1)} req/s, below ${BEYOND_FLOOR} x the peak ${peak.toFixed(1)}`)
    }
  }
  return { failures, speedup }
}

export function handleSummary (data) {
  const value = (name, stat) => data.metrics[name]?.values[stat]
  const threads = value('scaling_threads', 'value')
  const rps = [undefined]
  for (let step = 1; value(`scaling_step_${step}_rps`, 'value') !== undefined; step++) rps[step] = value(`scaling_step_${step}_rps`, 'value')
  const verdict = threads === undefined ? { failures: ['the run did not finish its steps'], speedup: () => NaN } : judge(threads, rps)
  const steps = rps.slice(1).map((r, i) => {
    const step = i + 1
    const again = step > 2 * threads
    const concurrency = again ? 1 : step
    const speedup = verdict.speedup(step)
    return {
      concurrency,
      again,
      rps: r,
      speedup,
      efficiency: speedup / Math.min(concurrency, threads),
      p50Ms: value(`scaling_step_${step}_duration`, 'med'),
      p95Ms: value(`scaling_step_${step}_duration`, 'p(95)'),
      p99Ms: value(`scaling_step_${step}_duration`, 'p(99)'),
      errors: value(`scaling_step_${step}_errors`, 'count') ?? 0
    }
  })
  const healthP99 = value('http_req_duration{probe:health}', 'p(99)')
  const { failures } = verdict
  if (value('http_req_failed', 'rate') > 0) failures.push(`${value('http_req_failed', 'passes')} requests failed`)
  if (!(healthP99 < HEALTH_P99_MS)) failures.push(`/health p99 ${healthP99?.toFixed(2)} ms is not below ${HEALTH_P99_MS} ms`)
  const report = { baseUrl: BASE_URL, num: NUM, threads, stepSeconds: STEP_SECONDS, steps, healthP99Ms: healthP99, pass: failures.length === 0, failures }

  const f = (x, digits = 1) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits)).padStart(8)
  const lines = [
    '',
    `fib(${NUM}) against ${BASE_URL}, ${threads} threads expected, ${STEP_SECONDS} s per step`,
    '',
    'concurrency     req/s  speed-up efficiency   p50 ms   p95 ms   p99 ms   errors',
    ...steps.map((s) => `${(s.again ? '1 again' : String(s.concurrency)).padStart(11)}${f(s.rps, 1).padStart(10)}${f(s.speedup, 2).padStart(10)}${f(s.efficiency, 2).padStart(11)}${f(s.p50Ms)} ${f(s.p95Ms)} ${f(s.p99Ms)} ${String(s.errors).padStart(8)}`),
    '',
    `/health p99 while computing: ${f(healthP99, 2).trim()} ms (threshold ${HEALTH_P99_MS} ms)`,
    report.pass ? 'PASS: throughput scales with the threads' : `FAIL:\n  ${failures.join('\n  ')}`,
    `written: ${SUMMARY_JSON}`,
    ''
  ]
  return { stdout: lines.join('\n'), [SUMMARY_JSON]: JSON.stringify(report, null, 2) }
}
