// node bench/latency.js: what a request costs beyond its own compute at concurrency 1, on the
// service, the worker_threads pool (the floor of its architecture), Fastify and Piscina alone (the
// floor of its hand-off) and the cluster prefork.
// wrk's medians at concurrency 1 compare runs a minute apart, while the speed of a core on this
// shared machine drifts by a third within minutes; here every answer carries its own compute time
// (computeMs), so each request's overhead is its latency less that, whatever the speed of the
// moment. One keep-alive connection, ROUNDS rounds of REQUESTS requests per server, alternated,
// after WARM_UP requests to each that are not counted (the first thousand or so requests of a
// fresh server and client run slower: their code is not optimised yet). Beside it, the CPU time
// the server's main thread spends per request, where most of that overhead is spent.
import { availableCpus } from '../src/cpus.js'
import { atConcurrencyOne, HEAVY } from './closed.js'
import { mainThreadCpuMs, startAll } from './proc.js'
import { median } from './stats.js'

const REQUESTS = Number(process.env.REQUESTS || 1000)
const ROUNDS = 3
const WARM_UP = 1500

const servers = [
  { name: 'service', file: 'src/server.js', env: {} },
  { name: 'worker_threads pool', file: 'bench/servers/thread-pool.js' },
  { name: 'Fastify + Piscina', file: 'bench/servers/piscina.js' },
  // Its HTTP runs in forked children: no main thread of its own to measure.
  { name: 'cluster prefork', file: 'bench/servers/cluster.js', forks: true }
].map((server, i) => ({ ...server, port: 4500 + i }))

await startAll(servers, availableCpus().cpus)
for (const server of servers) await atConcurrencyOne(server.port, WARM_UP)
const overheads = Object.fromEntries(servers.map((s) => [s.name, []]))
const latencies = Object.fromEntries(servers.map((s) => [s.name, []]))
const mainCpuUs = Object.fromEntries(servers.map((s) => [s.name, 0]))
for (let round = 0; round < ROUNDS; round++) {
  for (const server of servers) {
    const before = mainThreadCpuMs(server.pid)
    for (const { ms, overheadMs } of await atConcurrencyOne(server.port, REQUESTS)) {
      latencies[server.name].push(ms)
      overheads[server.name].push(overheadMs)
    }
    mainCpuUs[server.name] += (mainThreadCpuMs(server.pid) - before) * 1000 / (ROUNDS * REQUESTS)
  }
}
console.log(`fib(${HEAVY}) at concurrency 1, ${ROUNDS} x ${REQUESTS} requests a server after ${WARM_UP} not counted: medians, ms`)
for (const { name, forks } of servers) {
  const main = forks ? '' : `  main thread ${mainCpuUs[name].toFixed(0)} us CPU a request`
  console.log(`${name.padEnd(22)} latency ${median(latencies[name]).toFixed(2)}  beyond its own compute ${median(overheads[name]).toFixed(2)}${main}`)
}
process.exit(0)
