// node bench/latency.js: what a request costs beyond its own compute at concurrency 1, on the
// service, the worker_threads pool (the floor of its architecture), Fastify and Piscina alone (the
// floor of its hand-off) and the cluster prefork.
// wrk's medians at concurrency 1 compare runs a minute apart, while the speed of a core on this
// shared machine drifts by a third within minutes; here every answer carries its own compute time
// (computeMs), so each request's overhead is its latency less that, whatever the speed of the
// moment. One keep-alive connection, ROUNDS rounds of REQUESTS requests per server, alternated.
import { availableCpus } from '../src/cpus.js'
import { atConcurrencyOne, HEAVY } from './closed.js'
import { startAll } from './proc.js'
import { median } from './stats.js'

const REQUESTS = Number(process.env.REQUESTS || 300)
const ROUNDS = 3

const servers = [
  { name: 'service', file: 'src/server.js', env: {} },
  { name: 'worker_threads pool', file: 'bench/servers/thread-pool.js' },
  { name: 'Fastify + Piscina', file: 'bench/servers/piscina.js' },
  { name: 'cluster prefork', file: 'bench/servers/cluster.js' }
].map((server, i) => ({ ...server, port: 4500 + i }))

await startAll(servers, availableCpus().cpus)
const overheads = Object.fromEntries(servers.map((s) => [s.name, []]))
const latencies = Object.fromEntries(servers.map((s) => [s.name, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const server of servers) {
    for (const { ms, overheadMs } of await atConcurrencyOne(server.port, REQUESTS)) {
      latencies[server.name].push(ms)
      overheads[server.name].push(overheadMs)
    }
  }
}
console.log(`fib(${HEAVY}) at concurrency 1, ${ROUNDS} x ${REQUESTS} requests a server: medians, ms`)
for (const { name } of servers) {
  console.log(`${name.padEnd(22)} latency ${median(latencies[name]).toFixed(2)}  beyond its own compute ${median(overheads[name]).toFixed(2)}`)
}
process.exit(0)
