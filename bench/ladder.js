// node bench/ladder.js: where the heavy path's throughput goes against the cluster prefork, one
// step at a time. fib(27) at concurrency 2N on a ladder of servers, each adding one thing to a
// server below it: a thread hop (the worker_threads pool), a second task waiting on each thread,
// the AbortController a cancellable request needs (Fastify's request.signal), Piscina's hand-off
// (with one task a thread and with two), the signal handed to Piscina, the service's own features
// with one task a thread, and last the round trip the service saves with two, its default.
// For each: 2xx/s as a share of the cluster's measured just before and just after it (the machine's
// speed drifts by tens of percent within a minute, and a share of a cluster window a minute away
// drifts with it); the main thread's CPU time per request (/proc schedstat), the counter that the
// noise of this shared machine disturbs least, and the pool threads' and the other threads' (V8's,
// libuv's); and what a hop between threads costs beside it: the CPU the machine leaves idle (a
// thread waiting for its next task) and the server's threads' context switches per request. The
// servers run at once; each round drives every one in turn with a cluster window between each two
// (the order reversed every other round), waiting after each until it is idle. Medians over the
// rounds. About 14 minutes.
//
//   node bench/ladder.js                           # 8 rounds of 5 s; writes bench/out/ladder.md
//   BENCH_ROUNDS=4 BENCH_SECONDS=3 node bench/ladder.js
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { availableCpus } from '../src/cpus.js'
import { HEAVY, wrk } from './closed.js'
import { cpuSince, cpuSnapshot, machineCpuMs, requireTools, settle, startAll, switchesOfTree, switchesSince } from './proc.js'
import { median } from './stats.js'

const OUT = fileURLToPath(new URL('./out', import.meta.url))
const ROUNDS = Number(process.env.BENCH_ROUNDS || 8)
const SECONDS = Number(process.env.BENCH_SECONDS || 5)
const WARM_UP_SECONDS = 2
requireTools([['wrk', 'Debian: apt-get install wrk']])

// `adds`: what the step adds, to the server named by `to` (the step below it).
const servers = [
  // Its HTTP runs in forked children: no main thread of its own to count (as in latency.js).
  { name: 'cluster prefork', file: 'bench/servers/cluster.js', forks: true, adds: 'computes where it parses; no main thread of its own' },
  { name: 'worker_threads pool', file: 'bench/servers/thread-pool.js', to: 'cluster prefork', adds: 'a thread hop (postMessage, a FIFO, one task a thread)' },
  { name: 'pool, two tasks a thread', file: 'bench/servers/thread-pool.js', env: { TASKS_PER_WORKER: '2' }, to: 'worker_threads pool', adds: "a second task waiting on each thread, as in the service's default" },
  { name: 'pool + request.signal', file: 'bench/servers/thread-pool.js', env: { SIGNAL: '1' }, to: 'worker_threads pool', adds: "Fastify's request.signal, handed to nothing" },
  { name: 'Piscina, no signal', file: 'bench/servers/piscina.js', env: { SIGNAL: '0' }, to: 'worker_threads pool', adds: "Piscina's hand-off in place of postMessage" },
  { name: 'Piscina, two tasks a thread', file: 'bench/servers/piscina.js', env: { SIGNAL: '0', TASKS_PER_WORKER: '2' }, to: 'Piscina, no signal', adds: 'two tasks a thread (concurrentTasksPerWorker), as the service hands them; no signal, which would keep it to one' },
  { name: 'Fastify + Piscina', file: 'bench/servers/piscina.js', to: 'Piscina, no signal', adds: 'the request.signal handed to Piscina (cancellable tasks)' },
  { name: 'service, 1 task per thread', file: 'src/server.js', env: { POOL_TASKS_PER_THREAD: '1' }, to: 'Fastify + Piscina', adds: "the service's queue, deadlines, metrics, hooks, validation" },
  { name: 'service', file: 'src/server.js', to: 'service, 1 task per thread', adds: 'two tasks a thread (the default): a cheap task waits on a busy thread, no round trip between tasks' }
].map((server, i) => ({ ...server, port: 4900 + i, rps: [], ratio: [], mainUs: [], poolUs: [], helpersUs: [], busy: [], switches: [] }))
const byName = new Map(servers.map((server) => [server.name, server]))
const url = (server) => `http://127.0.0.1:${server.port}/fib?num=${HEAVY}`

const threads = availableCpus().cpus
const connections = 2 * threads
await startAll(servers, threads)
for (const server of servers) {
  await wrk(url(server), connections, WARM_UP_SECONDS)
  await settle(server.pid)
}
const cluster = byName.get('cluster prefork')
// One window of `server`: its 2xx/s; its threads' CPU by class (main thread, pool threads, the
// others: V8's and libuv's), and their context switches, per request; the machine's busy share (of
// every CPU, the client's work included).
async function measure (server) {
  const before = { cpu: cpuSnapshot(server.pid), switches: switchesOfTree(server.pid), machine: machineCpuMs() }
  const { rps } = await wrk(url(server), connections, SECONDS)
  const requests = rps * SECONDS
  const machine = machineCpuMs()
  server.busy.push((machine.busy - before.machine.busy) / (machine.total - before.machine.total))
  server.switches.push(switchesSince(server.pid, before.switches) / requests)
  if (!server.forks) {
    const cpu = cpuSince(server.pid, before.cpu)
    server.mainUs.push(cpu.main * 1000 / requests)
    server.poolUs.push(cpu.pool * 1000 / requests)
    server.helpersUs.push(cpu.helpers * 1000 / requests)
  }
  await settle(server.pid)
  return rps
}
const steps = servers.filter((server) => server !== cluster)
let clusterRps = await measure(cluster)
// How far the machine's speed moves between two cluster windows, a server's window apart: the
// drift each ratio's bracketing takes out only in part, to read the run's ratios against.
const drifts = []
for (let round = 0; round < ROUNDS; round++) {
  for (const server of round % 2 === 0 ? steps : [...steps].reverse()) {
    const rps = await measure(server)
    const next = await measure(cluster)
    server.rps.push(rps)
    const bracket = (clusterRps + next) / 2
    server.ratio.push(rps / bracket)
    drifts.push(Math.abs(next - clusterRps) / bracket)
    cluster.rps.push(next)
    clusterRps = next
  }
  cluster.ratio.push(1)
  console.log(`round ${round + 1}: ${steps.map((s) => `${s.name} ${s.ratio[round].toFixed(2)}`).join(', ')}`)
}

// A number for the table, '-' where there is none; `signed` for a step, with its sign.
const f = (x, d) => (x === undefined ? '-' : x.toFixed(d))
const signed = (x, d) => (x > 0 ? `+${f(x, d)}` : f(x, d))
const pct = (x) => `${(100 * x).toFixed(1)}%`
const rows = servers.map((server) => {
  const mainUs = server.forks ? undefined : median(server.mainUs)
  const below = byName.get(server.to)
  const belowMainUs = below && !below.forks ? median(below.mainUs) : undefined
  const step = below && signed(median(server.ratio) - median(below.ratio), 3)
  const stepUs = mainUs !== undefined && belowMainUs !== undefined ? signed(mainUs - belowMainUs, 0) : undefined
  const threadUs = (us) => (server.forks ? '-' : f(median(us), 0))
  return `| ${server.name} | ${server.to ?? '-'} | ${server.adds} | ${f(median(server.rps), 0)} | ${f(median(server.ratio), 3)} | ${server.ratio.map((r) => f(r, 2)).join(' ')} | ${step ?? '-'} | ${f(mainUs, 0)} | ${stepUs ?? '-'} | ${threadUs(server.poolUs)} | ${threadUs(server.helpersUs)} | ${f(median(server.busy), 3)} | ${f(median(server.switches), 1)} |`
})
const markdown = [
  `# fib(${HEAVY}) at concurrency ${connections}, one step at a time`,
  '',
  `${new Date().toISOString().slice(0, 10)}, ${threads} CPUs, Node ${process.version}; ${ROUNDS} rounds of ${SECONDS} s per server, medians; the ratio is each window's 2xx/s over the mean of the cluster prefork's windows just before and after it, which differed by a median of ${pct(median(drifts))} (${pct(Math.min(...drifts))}-${pct(Math.max(...drifts))}).`,
  '',
  '| server | on top of | what it adds | 2xx/s | x cluster | per round | step | main thread us/request | step us | pool threads us/request | other threads us/request | machine busy | context switches/request |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ...rows,
  ''
].join('\n')
mkdirSync(OUT, { recursive: true })
writeFileSync(join(OUT, 'ladder.md'), markdown)
console.log(`\n${markdown}`)
process.exit(0)
