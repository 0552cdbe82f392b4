// npm run bench: the service against every other strategy, side by side on this machine.
// Every server runs at once on its own port; each workload is run on each server in turn,
// round after round in a rotating order, and the medians are compared as ratios.
//
//   npm run bench                      # closed loop (wrk), 5 s runs, 3 rounds, about 10 minutes,
//                                      # then the open loop (k6), about 6 minutes; writes bench/
//   npm run bench -- --suite open      # only the open loop (or --suite closed)
//   npm run bench -- --smoke           # seconds-long runs: keeps the harness working (CI)
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { availableCpus } from '../src/cpus.js'
import fibTask from '../workers/fib.js'
import { chart } from './chart.js'
import { hockey } from './hockey.js'
import { runOpen } from './open.js'
import { openMarkdown } from './report.js'
import { rssOfTree, startAll } from './proc.js'

const { values: args } = parseArgs({
  options: { smoke: { type: 'boolean', default: false }, out: { type: 'string' }, suite: { type: 'string', default: 'all' } }
})
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SECONDS = Number(process.env.BENCH_SECONDS || (args.smoke ? 1 : 5))
const ROUNDS = Number(process.env.BENCH_ROUNDS || (args.smoke ? 1 : 3))
const OUT = args.out ?? join(ROOT, args.smoke ? 'bench/out' : 'bench')
const N = availableCpus().cpus
const HEAVY = 27
const TRIVIAL = 10
const HEALTH_EVERY_MS = 20
const FIRST_PORT = 4100
// The open loop: 20 s per server and load (about 6 minutes a round).
const OPEN_SECONDS = Number(process.env.BENCH_OPEN_SECONDS || (args.smoke ? 2 : 20))
const OPEN_ROUNDS = Number(process.env.BENCH_OPEN_ROUNDS || 1)
const OPEN_LOOP_SERVERS = ['service', 'cluster prefork', 'primary + IPC pool']

// name, entry file, extra environment. THREADS tells the baselines how many processes/children.
const SERVERS = [
  { name: 'service', file: 'src/server.js', env: {} },
  { name: 'service, inline off', file: 'src/server.js', env: { FIB_INLINE_MAX_NUM: '0' } },
  { name: 'bare Fastify (no work)', file: 'bench/servers/bare.js' },
  { name: 'single thread', file: 'bench/servers/single.js' },
  { name: 'cluster prefork', file: 'bench/servers/cluster.js' },
  { name: 'fork per request', file: 'bench/servers/fork-per-request.js' },
  { name: 'thread per request', file: 'bench/servers/thread-per-request.js' },
  { name: 'primary + IPC pool', file: 'bench/servers/ipc-pool.js' }
].map((server, i) => ({ ...server, port: FIRST_PORT + i, peakRssBytes: 0 }))

const WORKLOADS = [
  { id: 'heavy-1', label: `fib(${HEAVY}) at concurrency 1`, num: HEAVY, connections: 1 },
  { id: 'heavy-N', label: `fib(${HEAVY}) at concurrency N=${N}`, num: HEAVY, connections: N },
  { id: 'heavy-2N', label: `fib(${HEAVY}) at concurrency 2N=${2 * N}, /health probed every ${HEALTH_EVERY_MS} ms`, num: HEAVY, connections: 2 * N, probe: true },
  { id: 'trivial-64', label: `fib(${TRIVIAL}) at concurrency 64`, num: TRIVIAL, connections: 64 }
]

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}
// A number for a table or a log line; '-' where there is none (e.g. no 2xx answer to time).
const f = (x, d = 1) => (x === undefined ? '-' : x.toFixed(d))
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

const toMs = (value, unit) => Number(value) * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[unit]

// One wrk run: requests/s, latency percentiles, errors.
function wrk (url, connections, seconds) {
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

// /health asked every HEALTH_EVERY_MS on one keep-alive connection; latencies in ms.
async function probeHealth (port, ms) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const latencies = []
  const end = Date.now() + ms
  while (Date.now() < end) {
    const sent = process.hrtime.bigint()
    await new Promise((resolve) => {
      http.get({ host: '127.0.0.1', port, path: '/health', agent }, (res) => {
        res.resume()
        res.on('end', () => {
          latencies.push(Number(process.hrtime.bigint() - sent) / 1e6)
          resolve()
        })
      }).on('error', resolve)
    })
    await sleep(HEALTH_EVERY_MS)
  }
  agent.destroy()
  return latencies
}

async function run (server, workload) {
  const url = `http://127.0.0.1:${server.port}/fib?num=${workload.num}`
  const sampler = setInterval(() => { server.peakRssBytes = Math.max(server.peakRssBytes, rssOfTree(server.pid)) }, 200)
  const [result, health] = await Promise.all([
    wrk(url, workload.connections, SECONDS),
    workload.probe ? sleep(300).then(() => probeHealth(server.port, SECONDS * 1000 - 600)) : undefined
  ])
  clearInterval(sampler)
  return { ...result, health }
}

// The bare compute time of the heavy task on this machine, in this process: the latency floor.
function computeFloorMs () {
  for (let i = 0; i < 20; i++) fibTask({ num: HEAVY })
  return median(Array.from({ length: 50 }, () => fibTask({ num: HEAVY }).computeMs))
}

for (const [tool, install] of [['wrk', 'Debian: apt-get install wrk'], ['k6', '. .ci/k6.sh builds it']]) {
  if (spawnSync(tool, ['--version']).error) {
    console.error(`bench: ${tool} is not installed (${install})`)
    process.exit(1)
  }
}
mkdirSync(OUT, { recursive: true })
const machine = { cpu: cpus()[0]?.model, cpus: N, node: process.version, date: new Date().toISOString().slice(0, 10) }
await startAll(SERVERS, N)
if (args.suite !== 'open') await closedLoop()
if (args.suite !== 'closed') {
  const open = await runOpen({
    servers: SERVERS.filter((s) => OPEN_LOOP_SERVERS.includes(s.name)),
    threads: N,
    seconds: OPEN_SECONDS,
    rounds: OPEN_ROUNDS,
    limitSeconds: args.smoke ? 1 : 10,
    ...(args.smoke && { loads: [0.5, 1.2] }),
    log: console.log
  })
  const report = { machine, ...open }
  writeFileSync(join(OUT, 'open-loop.json'), `${JSON.stringify(report, null, 2)}\n`)
  writeFileSync(join(OUT, 'open-loop.md'), openMarkdown(report))
  writeFileSync(join(OUT, 'open-loop.svg'), hockey(report, machine))
  console.log(`bench: wrote ${join(OUT, 'open-loop.md')}, open-loop.json and open-loop.svg`)
}
process.exit(0)

async function closedLoop () {
  // Measured again at each round: on a shared machine the speed of a core drifts within minutes.
  const floors = [computeFloorMs()]
  console.log(`bench: ${SERVERS.length} servers, ${WORKLOADS.length} workloads, ${ROUNDS} rounds of ${SECONDS} s, N=${N}; fib(${HEAVY}) computes in ${floors[0].toFixed(2)} ms here`)
  for (const server of SERVERS) {
    await fetch(`http://127.0.0.1:${server.port}/fib?num=${HEAVY}`)
    server.idleRssBytes = rssOfTree(server.pid)
  }

  const runs = Object.fromEntries(WORKLOADS.map((w) => [w.id, Object.fromEntries(SERVERS.map((s) => [s.name, []]))]))
  for (let round = 0; round < ROUNDS; round++) {
    if (round > 0) floors.push(computeFloorMs())
    for (const workload of WORKLOADS) {
      // A rotating order: no server always runs first, or right after the same neighbour.
      const order = SERVERS.map((_, i) => SERVERS[(i + round) % SERVERS.length])
      for (const server of order) {
        const result = await run(server, workload)
        runs[workload.id][server.name].push(result)
        console.log(`round ${round + 1} ${workload.id.padEnd(10)} ${server.name.padEnd(24)} ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${f(result.p50, 2)} ms  p99 ${f(result.p99, 2)} ms${result.errors ? `  errors ${result.errors}` : ''}`)
      }
    }
  }

  // Medians over the rounds.
  const results = {}
  for (const workload of WORKLOADS) {
    results[workload.id] = {}
    for (const server of SERVERS) {
      const r = runs[workload.id][server.name]
      const health = r.flatMap((x) => x.health ?? []).sort((a, b) => a - b)
      results[workload.id][server.name] = {
        rps: median(r.map((x) => x.rps)),
        p50: median(r.map((x) => x.p50)),
        p99: median(r.map((x) => x.p99)),
        errors: r.reduce((sum, x) => sum + x.errors, 0),
        shed: r.reduce((sum, x) => sum + x.shed, 0),
        health: health.length ? { p50: percentile(health, 0.5), p99: percentile(health, 0.99), max: health.at(-1), count: health.length } : undefined
      }
    }
  }

  const report = {
    machine,
    seconds: SECONDS,
    rounds: ROUNDS,
    computeFloorMs: median(floors),
    servers: SERVERS.map(({ name, file, env, idleRssBytes, peakRssBytes }) => ({ name, file, env, idleRssBytes, peakRssBytes })),
    workloads: WORKLOADS,
    results
  }
  writeFileSync(join(OUT, 'results.json'), `${JSON.stringify(report, null, 2)}\n`)
  writeFileSync(join(OUT, 'results.md'), markdown(report))
  writeFileSync(join(OUT, 'chart.svg'), chart(report))
  console.log(`bench: wrote ${join(OUT, 'results.md')}, results.json and chart.svg`)
}

function markdown ({ machine, seconds, rounds, computeFloorMs, servers, workloads, results }) {
  const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}x` : '-')
  const lines = [
    '# Benchmark results',
    '',
    `Measured by \`npm run bench\` on ${machine.date}: ${machine.cpu}, ${machine.cpus} CPUs for the process, Node ${machine.node};`,
    `wrk on the same machine and cores, ${rounds} round(s) of ${seconds} s per server and workload, medians.`,
    `The bare compute time of fib(${HEAVY}) here is ${f(computeFloorMs, 2)} ms (median of one measurement per round). Throughput counts 2xx answers only; ratios are against the cluster prefork and bare Fastify of the same run; latencies include 503s where there are any.`,
    ''
  ]
  for (const workload of workloads) {
    const r = results[workload.id]
    lines.push(`## ${workload.label}`, '', '| server | 2xx/s | vs cluster | vs bare Fastify | p50 ms | p99 ms | 503s | socket errors |', '|---|---|---|---|---|---|---|---|')
    for (const { name } of servers) {
      const x = r[name]
      lines.push(`| ${name} | ${f(x.rps, 0)} | ${ratio(x.rps, r['cluster prefork'].rps)} | ${ratio(x.rps, r['bare Fastify (no work)'].rps)} | ${f(x.p50, 2)} | ${f(x.p99, 2)} | ${x.shed} | ${x.errors} |`)
    }
    if (workload.probe) {
      lines.push('', `/health while the heavy load runs (one request every ${HEALTH_EVERY_MS} ms):`, '', '| server | /health p50 ms | p99 ms | max ms |', '|---|---|---|---|')
      for (const { name } of servers) {
        const h = r[name].health
        lines.push(`| ${name} | ${f(h?.p50, 2)} | ${f(h?.p99, 2)} | ${f(h?.max, 2)} |`)
      }
    }
    lines.push('')
  }
  lines.push('## Memory', '', '| server | RSS after warm-up, MiB | peak RSS under load, MiB (all processes) |', '|---|---|---|')
  for (const s of servers) lines.push(`| ${s.name} | ${f(s.idleRssBytes / 2 ** 20, 0)} | ${f(s.peakRssBytes / 2 ** 20, 0)} |`)
  const svc = (id) => results[id].service
  lines.push('', '## Goals', '', '| goal | measured | met |', '|---|---|---|')
  const goal = (text, value, met) => lines.push(`| ${text} | ${value} | ${met ? 'yes' : '**no**'} |`)
  const heavy2N = svc('heavy-2N').rps / results['heavy-2N']['cluster prefork'].rps
  goal(`fib(${HEAVY}) at 2N: >= 1.0x the cluster prefork`, `${heavy2N.toFixed(2)}x`, heavy2N >= 1)
  const trivial = svc('trivial-64').rps / results['trivial-64']['bare Fastify (no work)'].rps
  goal(`fib(${TRIVIAL}) at 64: >= 0.9x bare Fastify`, `${trivial.toFixed(2)}x`, trivial >= 0.9)
  const healthP99 = svc('heavy-2N').health?.p99
  goal('/health p99 <= 5 ms while every core computes', `${f(healthP99, 2)} ms`, healthP99 <= 5)
  const c1 = svc('heavy-1').p50 - computeFloorMs
  goal(`concurrency 1: median latency <= compute (${f(computeFloorMs, 2)} ms) + 0.3 ms`, `${c1 < 0 ? '' : '+'}${f(c1, 2)} ms`, c1 <= 0.3)
  lines.push('', '![throughput ratios](chart.svg)', '',
    'Closed-loop runs hide queueing; the open-loop run of a mixed workload (latency against offered load) is in [open-loop.md](open-loop.md).', '')
  return lines.join('\n')
}
