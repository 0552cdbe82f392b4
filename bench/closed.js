// The closed-loop part of `npm run bench`: wrk drives each workload on each server in turn, round
// after round in a rotating order; medians over the rounds, /health probed during the 2N load.
import { spawn } from 'node:child_process'
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import fibTask from '../workers/fib.js'
import { rssOfTree, settle } from './proc.js'
import { median, percentile } from './stats.js'

export const HEAVY = 27
export const TRIVIAL = 10
// A p99 needs samples: three rounds of 5 s probed every 10 ms give about 1,300, the p99 their
// 13th slowest. A probe costs the main thread tens of µs: under 1% of a core.
export const HEALTH_EVERY_MS = 10
// Passes of the interleaved concurrency-1 measurement a round (interleavedAtOne).
const AT_ONE_PASSES = 5

export const workloads = (n) => [
  { id: 'heavy-1', label: `fib(${HEAVY}) at concurrency 1`, num: HEAVY, connections: 1 },
  { id: 'heavy-N', label: `fib(${HEAVY}) at concurrency N=${n}`, num: HEAVY, connections: n },
  { id: 'heavy-2N', label: `fib(${HEAVY}) at concurrency 2N=${2 * n}, /health probed every ${HEALTH_EVERY_MS} ms`, num: HEAVY, connections: 2 * n, probe: true },
  { id: 'trivial-64', label: `fib(${TRIVIAL}) at concurrency 64`, num: TRIVIAL, connections: 64 }
]

// A log line's start: the round (counted from 1) and the workload; `point` adds the server, padded
// to a column.
const at = (round, id) => `round ${round + 1} ${id.padEnd(10)}`
const point = (round, id, name) => `${at(round, id)} ${name.padEnd(24)}`

// A number for a log line; '-' where there is none (e.g. no 2xx answer to time).
const f = (x, d = 1) => (x === undefined ? '-' : x.toFixed(d))

const toMs = (value, unit) => Number(value) * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[unit]

// One wrk run: requests/s, latency percentiles, errors.
export function wrk (url, connections, seconds) {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t', String(Math.min(2, connections)), '-c', String(connections), '-d', `${seconds}s`, '--latency', url])
    let out = ''
    child.stdout.on('data', (chunk) => { out += chunk })
    child.on('error', reject)
    child.on('exit', () => {
      const latency = (p) => {
        const m = out.match(new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)$`, 'm'))
        return m ? toMs(m[1], m[2]) : undefined
      }
      // Only 2xx count: a 503 is not throughput.
      const [, total, duration, unit] = out.match(/(\d+) requests in ([\d.]+)(us|ms|s|m)/) ?? [0, 0, 1, 's']
      const non2xx = Number(out.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0)
      resolve({
        rps: (Number(total) - non2xx) / (toMs(duration, unit) / 1000),
        shed: non2xx,
        p50: latency(50),
        p99: latency(99),
        errors: [...out.matchAll(/(connect|read|write|timeout) (\d+)/g)].reduce((sum, m) => sum + Number(m[2]), 0)
      })
    })
  })
}

// One GET on `agent`'s connection: its latency in ms and its body.
function timedGet (port, path, agent) {
  return new Promise((resolve, reject) => {
    const sent = process.hrtime.bigint()
    http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - sent) / 1e6, body }))
    }).on('error', reject)
  })
}

// One GET of fib(`num`) on `agent`'s connection: its latency, and that less the compute time the
// answer reports (what the request cost beyond its own work, whatever the core's speed), in ms.
async function timedFib (port, num, agent) {
  const { ms, body } = await timedGet(port, `/fib?num=${num}`, agent)
  return { ms, overheadMs: ms - JSON.parse(body).computeMs }
}

// `count` requests of the heavy task one after the other on one keep-alive connection, or as many
// as `maxMs` allows: each one's { ms, overheadMs }.
export async function atConcurrencyOne (port, count, { maxMs = Infinity } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const answers = []
  const end = performance.now() + maxMs
  for (let i = 0; i < count && performance.now() < end; i++) answers.push(await timedFib(port, HEAVY, agent))
  agent.destroy()
  return answers
}

// One round of concurrency 1 on every server: `passes` passes, each sending every server, in an
// order rotated by `shift` and by the pass, `batch` requests one after the other (at most `maxMs`
// of them: thread and fork per request take 50 ms a request). Interleaved, so that a drift of the
// machine over the round falls on every server alike. Each server's overheads, in ms.
export async function interleavedAtOne (servers, { passes, batch, maxMs, shift = 0 }) {
  const overheads = new Map(servers.map((s) => [s, []]))
  for (let pass = 0; pass < passes; pass++) {
    for (let i = 0; i < servers.length; i++) {
      const server = servers[(i + pass + shift) % servers.length]
      for (const { overheadMs } of await atConcurrencyOne(server.port, batch, { maxMs })) overheads.get(server).push(overheadMs)
    }
  }
  return overheads
}

// /health asked every HEALTH_EVERY_MS on one keep-alive connection; latencies in ms (a failed
// request counts for none).
async function probeHealth (port, ms) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const latencies = []
  const end = Date.now() + ms
  while (Date.now() < end) {
    const answer = await timedGet(port, '/health', agent).catch(() => undefined)
    if (answer !== undefined) latencies.push(answer.ms)
    await sleep(HEALTH_EVERY_MS)
  }
  agent.destroy()
  return latencies
}

async function run (server, workload, seconds) {
  const url = `http://127.0.0.1:${server.port}/fib?num=${workload.num}`
  const sampler = setInterval(() => { server.peakRssBytes = Math.max(server.peakRssBytes, rssOfTree(server.pid)) }, 200)
  const [result, health] = await Promise.all([
    wrk(url, workload.connections, seconds),
    workload.probe ? sleep(300).then(() => probeHealth(server.port, seconds * 1000 - 600)) : undefined
  ])
  clearInterval(sampler)
  return { ...result, health }
}

// The bare compute time of the heavy task on this machine, in this process: the latency floor.
function computeFloorMs () {
  for (let i = 0; i < 20; i++) fibTask({ num: HEAVY })
  return median(Array.from({ length: 50 }, () => fibTask({ num: HEAVY }).computeMs))
}

const summary = (latencies) => {
  const sorted = latencies.toSorted((a, b) => a - b)
  return sorted.length ? { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1), count: sorted.length } : undefined
}

// Every workload on every server (already started), `rounds` times; the report of medians.
export async function runClosed ({ servers, threads, seconds, rounds, log }) {
  const list = workloads(threads)
  // Measured again at each round: on a shared machine the speed of a core drifts within minutes.
  const floors = [computeFloorMs()]
  log(`bench: ${servers.length} servers, ${list.length} workloads, ${rounds} rounds of ${seconds} s, N=${threads}; fib(${HEAVY}) computes in ${floors[0].toFixed(2)} ms here`)
  for (const server of servers) {
    await fetch(`http://127.0.0.1:${server.port}/fib?num=${HEAVY}`)
    server.idleRssBytes = rssOfTree(server.pid)
  }

  const runs = Object.fromEntries(list.map((w) => [w.id, Object.fromEntries(servers.map((s) => [s.name, []]))]))
  // The same /health probe on each idle server: the reference of the probe under load.
  const idle = Object.fromEntries(servers.map((s) => [s.name, []]))
  // At concurrency 1, latency beyond each answer's own compute: wrk's medians compare runs a
  // minute apart, while a core's speed here drifts by a third within minutes. The first thousand
  // or so requests of a fresh server and client are slower (their code not yet optimised): not
  // counted.
  const overheads = Object.fromEntries(servers.map((s) => [s.name, []]))
  const atOne = { passes: AT_ONE_PASSES, batch: 12 * seconds, maxMs: 200 * seconds }
  for (const server of servers) await atConcurrencyOne(server.port, 200 * seconds, { maxMs: 600 * seconds })
  for (let round = 0; round < rounds; round++) {
    if (round > 0) floors.push(computeFloorMs())
    for (const server of servers) idle[server.name].push(...await probeHealth(server.port, seconds * 1000 - 600))
    for (const [server, measured] of await interleavedAtOne(servers, { ...atOne, shift: round })) {
      overheads[server.name].push(...measured)
      log(`${point(round, list[0].id, server.name)} beyond its own compute: median ${median(measured).toFixed(2)} ms (${measured.length} requests)`)
    }
    for (const workload of list) {
      // A rotating order, reversed every other round: no server always runs first, nor always
      // right after the same neighbour.
      const rotated = servers.map((_, i) => servers[(i + round) % servers.length])
      const order = round % 2 ? rotated.reverse() : rotated
      for (const server of order) {
        const result = await run(server, workload, seconds)
        runs[workload.id][server.name].push(result)
        const waited = await settle(server.pid)
        if (waited > 0) log(`${at(round, workload.id)} ${server.name}: busy ${waited} ms after wrk stopped`)
        log(`${point(round, workload.id, server.name)} ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${f(result.p50, 2)} ms  p99 ${f(result.p99, 2)} ms${result.errors ? `  errors ${result.errors}` : ''}`)
      }
    }
  }

  // Medians over the rounds.
  const results = {}
  for (const workload of list) {
    results[workload.id] = {}
    for (const server of servers) {
      const r = runs[workload.id][server.name]
      results[workload.id][server.name] = {
        rps: median(r.map((x) => x.rps)),
        p50: median(r.map((x) => x.p50)),
        p99: median(r.map((x) => x.p99)),
        errors: r.reduce((sum, x) => sum + x.errors, 0),
        shed: r.reduce((sum, x) => sum + x.shed, 0),
        health: summary(r.flatMap((x) => x.health ?? []))
      }
    }
  }

  return {
    seconds,
    rounds,
    computeFloorMs: median(floors),
    servers: servers.map(({ name, file, env, idleRssBytes, peakRssBytes }) => ({ name, file, env, idleRssBytes, peakRssBytes })),
    workloads: list,
    results,
    idleHealth: Object.fromEntries(servers.map((s) => [s.name, summary(idle[s.name])])),
    overheadAtOneMs: Object.fromEntries(servers.map((s) => [s.name, median(overheads[s.name])]))
  }
}
