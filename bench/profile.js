// node bench/profile.js: where the main thread's time goes, per request, in the service and in the
// floor beside it. For each case, each server runs under wrk twice: once plain, to count the main
// thread's CPU per request (/proc/<pid>/task/<pid>/schedstat), once under V8's profiler, whose
// samples are split by owner: the innermost frame of each sample that belongs to the service's own
// code, to a library it uses or to Fastify (so the time pino spends in fs.writeSync is the log's,
// and what Fastify runs when a callback-style hook calls done() is Fastify's, not the hook's);
// what no such frame claims is Node's own: the HTTP parser, sockets, the event loop.
//
//   node bench/profile.js                 # every case, 5 s per run; writes bench/out/profile.md
//                                         # and each profile (bench/out/*.cpuprofile, for DevTools)
//   BENCH_SECONDS=2 node bench/profile.js --case trivial     # or heavy, or one
import { once } from 'node:events'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { availableCpus } from '../src/cpus.js'
import { HEAVY, TRIVIAL, wrk } from './closed.js'
import { mainThreadCpuMs, start, waitReady } from './proc.js'

const { values: args } = parseArgs({ options: { case: { type: 'string', default: 'all' } } })
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const OUT = join(ROOT, 'bench/out')
const SECONDS = Number(process.env.BENCH_SECONDS || 5)
// As in npm run bench: the baselines get as many threads as the service's pool.
const THREADS = availableCpus().cpus

// The floors of the heavy path beside the service: of its architecture and of its hand-off. New
// objects for each case, which the run gives a port.
const floors = () => [
  { name: 'worker_threads pool', file: 'bench/servers/thread-pool.js' },
  { name: 'Fastify + Piscina', file: 'bench/servers/piscina.js' }
]

const CASES = {
  trivial: {
    label: `fib(${TRIVIAL}) at concurrency 64`,
    num: TRIVIAL,
    connections: 64,
    servers: [
      { name: 'service, LOG_LEVEL=error', file: 'src/server.js', env: { LOG_LEVEL: 'error' } },
      { name: 'service, LOG_LEVEL=info', file: 'src/server.js', env: { LOG_LEVEL: 'info' } },
      { name: 'bare Fastify', file: 'bench/servers/bare.js' },
      // The single-thread server made to spin 12 us a request: how a slower server's own
      // per-request costs (the socket write among them) change with its rate.
      { name: 'bare Fastify, 12 us spin', file: 'bench/servers/spin.js', env: { SPIN_US: '12' } }
    ]
  },
  heavy: {
    label: `fib(${HEAVY}) at concurrency 4`,
    num: HEAVY,
    connections: 4,
    servers: [{ name: 'service, LOG_LEVEL=warn', file: 'src/server.js', env: { LOG_LEVEL: 'warn' } }, ...floors()]
  },
  // The concurrency-1 goal: one request at a time, so the main thread's work is on each
  // request's path, and starts after 1-2 ms of idle.
  one: {
    label: `fib(${HEAVY}) at concurrency 1`,
    num: HEAVY,
    connections: 1,
    servers: [{ name: 'service', file: 'src/server.js' }, ...floors()]
  }
}

// Who a frame belongs to: the service's files by name, libraries by what they are for.
const OWNERS = [
  [/\/node_modules\/(pino|pino-std-serializers|sonic-boom|@pinojs\/redact|fast-redact|quick-format-unescaped|on-exit-leak-free|thread-stream)\//, 'log (pino)'],
  [/\/node_modules\/(prom-client|bintrees|tdigest)\//, 'metrics (prom-client)'],
  [/\/node_modules\/@fastify\/under-pressure\//, 'under-pressure'],
  [/\/node_modules\/piscina\//, 'Piscina'],
  [/\/node_modules\/(fast-json-stringify|ajv|@fastify\/ajv-compiler|fast-uri)\//, 'validation and serialisation'],
  [/\/node_modules\/@fastify\/error\//, 'errors'],
  [/\/(src|workers|bench\/servers)\/(.+\.js)$/, (m) => m[1] === 'bench/servers' ? 'the baseline\'s own code' : `service: ${m[1]}/${m[2]}`]
]
const FASTIFY = /\/node_modules\/(fastify|find-my-way|fast-querystring|avvio|toad-cache|process-warning|rfdc|@fastify\/[a-z-]+)\//

function ownerOf ({ url }) {
  for (const [pattern, owner] of OWNERS) {
    const m = url.match(pattern)
    if (m) return typeof owner === 'function' ? owner(m) : owner
  }
}

// Milliseconds of the main thread's samples by owner (idle left out).
function attribute (profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const ownerOfNode = new Map()
  const resolve = (id) => {
    if (ownerOfNode.has(id)) return ownerOfNode.get(id)
    const { callFrame } = byId.get(id)
    let owner = ownerOf(callFrame) ?? (FASTIFY.test(callFrame.url) ? 'Fastify core' : undefined)
    if (owner === undefined) {
      const up = parent.get(id)
      owner = up === undefined ? undefined : resolve(up)
    }
    ownerOfNode.set(id, owner)
    return owner
  }
  const other = (id) => byId.get(id).callFrame.functionName === '(garbage collector)' ? 'garbage collection' : 'Node: HTTP parser, sockets, event loop'
  const ms = {}
  profile.samples.forEach((id, i) => {
    const name = byId.get(id).callFrame.functionName
    if (name === '(idle)') return
    const owner = resolve(id) ?? other(id)
    ms[owner] = (ms[owner] ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000
  })
  return ms
}

// Runs `server` under wrk: a warm-up second, a run counting the main thread's CPU, then a run
// under the profiler (bench/servers/profiler.js), then stops it.
async function measure (id, server, workload) {
  const profileFile = join(OUT, `${id}-${server.name.replace(/\W+/g, '-')}.cpuprofile`)
  server.nodeArgs = ['--import', join(ROOT, 'bench/servers/profiler.js')]
  server.env = { ...server.env, PROFILE_FILE: profileFile }
  start(server, THREADS)
  await waitReady(server)
  const url = `http://127.0.0.1:${server.port}/fib?num=${workload.num}`
  await wrk(url, workload.connections, 1)
  const cpuBefore = mainThreadCpuMs(server.pid)
  const plain = await wrk(url, workload.connections, SECONDS)
  const cpuUsPerRequest = (mainThreadCpuMs(server.pid) - cpuBefore) * 1000 / (plain.rps * SECONDS)
  rmSync(profileFile, { force: true })
  server.child.kill('SIGWINCH')
  await sleep(100)
  const profiled = await wrk(url, workload.connections, SECONDS)
  server.child.kill('SIGWINCH')
  for (let i = 0; i < 100 && !existsSync(profileFile); i++) await sleep(100)
  const exited = once(server.child, 'exit')
  server.child.kill('SIGTERM')
  await exited
  const profileMs = attribute(JSON.parse(readFileSync(profileFile, 'utf8')))
  return { rps: plain.rps, cpuUsPerRequest, profileMs, requests: profiled.rps * SECONDS }
}

const f = (x, d = 1) => x.toFixed(d)

const lines = [`# Where the main thread's time goes (${new Date().toISOString().slice(0, 10)}, wrk ${SECONDS} s per run)`, '']
mkdirSync(OUT, { recursive: true })
let port = 4300
for (const [id, workload] of Object.entries(CASES)) {
  if (args.case !== 'all' && args.case !== id) continue
  lines.push(`## ${workload.label}`, '')
  const measured = []
  for (const server of workload.servers) {
    server.port = port++
    const m = { server, ...await measure(id, server, workload) }
    measured.push(m)
    console.log(`${workload.label}: ${server.name}: ${f(m.rps, 0)} req/s, main thread ${f(m.cpuUsPerRequest)} us CPU per request`)
  }
  lines.push('| server | 2xx/s | main-thread CPU, us per request |', '|---|---|---|',
    ...measured.map((m) => `| ${m.server.name} | ${f(m.rps, 0)} | ${f(m.cpuUsPerRequest)} |`), '')
  const usPerRequest = (m, owner) => (m.profileMs[owner] ?? 0) * 1000 / m.requests
  const owners = [...new Set(measured.flatMap((m) => Object.keys(m.profileMs)))]
    .sort((a, b) => usPerRequest(measured[0], b) - usPerRequest(measured[0], a))
  lines.push('Main-thread samples under the profiler, in microseconds per request (profiling slows every owner alike):', '',
    `| owner | ${measured.map((m) => m.server.name).join(' | ')} |`, `|---|${measured.map(() => '---|').join('')}`,
    ...owners.map((owner) => `| ${owner} | ${measured.map((m) => f(usPerRequest(m, owner))).join(' | ')} |`),
    `| **all** | ${measured.map((m) => `**${f(owners.reduce((sum, owner) => sum + usPerRequest(m, owner), 0))}**`).join(' | ')} |`, '')
}
writeFileSync(join(OUT, 'profile.md'), lines.join('\n'))
console.log(`\n${lines.join('\n')}\nbench: wrote bench/out/profile.md`)
process.exit(0)
