// The load of bench/cpu.js: every server in PORTS offered the same open-loop load at once, RATE
// requests a second each (k6's constant-arrival-rate, one scenario a server), the i-th request's
// num drawn from MIX with SEED (bench/k6/mix.js: the same tasks in the same order for each). The
// count of answers per server, 200 or not, written as JSON to OUT.
import exec from 'k6/execution'
import http from 'k6/http'
import { Counter } from 'k6/metrics'
import { mixSequence } from './mix.js'

const PORTS = __ENV.PORTS.split(',')
const RATE = Number(__ENV.RATE)
const MIX = JSON.parse(__ENV.MIX)

const ok = Object.fromEntries(PORTS.map((port) => [port, new Counter(`ok_${port}`)]))
const notOk = Object.fromEntries(PORTS.map((port) => [port, new Counter(`not_ok_${port}`)]))

export const options = {
  scenarios: Object.fromEntries(PORTS.map((port) => [`port_${port}`, {
    executor: 'constant-arrival-rate',
    rate: RATE,
    timeUnit: '1s',
    duration: __ENV.DURATION,
    preAllocatedVUs: Math.ceil(RATE / 2) + 10,
    maxVUs: 1000,
    gracefulStop: '30s',
    env: { PORT: port }
  }])),
  summaryTrendStats: ['med']
}

const numAt = mixSequence(MIX, Number(__ENV.SEED || 0))

export default function () {
  const port = __ENV.PORT
  const res = http.get(`http://127.0.0.1:${port}/fib?num=${numAt(exec.scenario.iterationInTest)}`)
  ;(res.status === 200 ? ok : notOk)[port].add(1)
}

export function handleSummary (data) {
  const count = (name) => data.metrics[name]?.values.count ?? 0
  const answers = Object.fromEntries(PORTS.map((port) => [port, { ok: count(`ok_${port}`), notOk: count(`not_ok_${port}`) }]))
  return { [__ENV.OUT]: JSON.stringify(answers) }
}
