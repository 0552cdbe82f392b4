// npm run bench: the service against every other strategy, side by side on this machine.
// Every server runs at once on its own port; the closed loop (bench/closed.js) and the open loop
// (bench/open.js) drive them in turn; bench/report.js, chart.js and hockey.js write what they found.
//
//   npm run bench                      # closed loop (wrk), 5 s runs, 3 rounds, about 10 minutes,
//                                      # then the open loop (k6), about 17 minutes; writes bench/
//   npm run bench -- --suite open      # only the open loop (or --suite closed)
//   npm run bench -- --suite open --mix big         # another mix: a name in open.js's MIXES,
//   npm run bench -- --mix '[[27,0.5],[33,0.5]]'    # or [[num, share], ...] (BENCH_MIX too)
//   npm run bench -- --suite open --trace DIR       # also each open-loop run's tasks, for bench/orders.js
//   npm run bench -- --suite open --speed answers   # the open loop's rate follows its answers' compute
//   npm run bench -- --smoke           # seconds-long runs: keeps the harness working (CI)
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { availableCpus } from '../src/cpus.js'
import { chart } from './chart.js'
import { runClosed } from './closed.js'
import { hockey } from './hockey.js'
import { parseMix, runOpen } from './open.js'
import { requireTools, startAll } from './proc.js'
import { closedMarkdown, openMarkdown } from './report.js'

const { values: args } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    out: { type: 'string' },
    suite: { type: 'string', default: 'all' },
    mix: { type: 'string', default: process.env.BENCH_MIX || 'default' },
    // More servers of SERVERS for the open loop, by name, separated by ';' (variants of the service).
    'open-also': { type: 'string', default: '' },
    // The open loop's loads, shares of C, comma-separated (open.js's LOADS by default).
    loads: { type: 'string' },
    // A directory for each open-loop run's trace, which bench/orders.js replays.
    trace: { type: 'string' },
    // What the open loop's rate follows: the speed probes, or the compute its answers report.
    speed: { type: 'string', default: 'probes' }
  }
})
if (!['probes', 'answers'].includes(args.speed)) {
  console.error(`bench: --speed ${args.speed} is invalid: expected probes or answers`)
  process.exit(1)
}
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SECONDS = Number(process.env.BENCH_SECONDS || (args.smoke ? 1 : 5))
const ROUNDS = Number(process.env.BENCH_ROUNDS || (args.smoke ? 1 : 3))
const OUT = args.out ?? join(ROOT, args.smoke ? 'bench/out' : 'bench')
const N = availableCpus().cpus
const FIRST_PORT = 4100
// The open loop: 20 s per server and load, 3 rounds (a 20 s p99 at high load swings 2x for the
// same code; about 7 minutes a round), C measured over 20 s at the start of each round.
const OPEN_SECONDS = Number(process.env.BENCH_OPEN_SECONDS || (args.smoke ? 2 : 20))
const OPEN_ROUNDS = Number(process.env.BENCH_OPEN_ROUNDS || (args.smoke ? 1 : 3))
const CAPACITY_SECONDS = args.smoke ? 2 : 20
// The service and its peers: C is the best peer's throughput.
const OPEN_PEERS = ['cluster prefork', 'FIFO pool']
const OPEN_LOOP_SERVERS = ['service', ...OPEN_PEERS, ...args['open-also'].split(';').filter(Boolean)]
const { name: mixName, mix } = parseMix(args.mix)

// name, entry file, extra environment. THREADS tells the baselines how many processes/children.
const SERVERS = [
  { name: 'service', file: 'src/server.js', env: {} },
  { name: 'service, LOG_LEVEL=error', file: 'src/server.js', env: { LOG_LEVEL: 'error' } },
  { name: 'service, 1 task per thread', file: 'src/server.js', env: { POOL_TASKS_PER_THREAD: '1' } },
  { name: 'service, inline off', file: 'src/server.js', env: { FIB_INLINE_MAX_NUM: '0' } },
  { name: 'bare Fastify (no work)', file: 'bench/servers/bare.js' },
  { name: 'single thread', file: 'bench/servers/single.js' },
  { name: 'cluster prefork', file: 'bench/servers/cluster.js', forks: true },
  { name: 'fork per request', file: 'bench/servers/fork-per-request.js', forks: true },
  { name: 'thread per request', file: 'bench/servers/thread-per-request.js' },
  { name: 'primary + IPC pool', file: 'bench/servers/ipc-pool.js', forks: true },
  { name: 'worker_threads pool', file: 'bench/servers/thread-pool.js' },
  { name: 'Fastify + Piscina', file: 'bench/servers/piscina.js' },
  { name: 'typical Fastify app', file: 'bench/servers/typical.js' },
  // The open loop's alone: its plain peer, and the service ordering tasks as they come, as it does
  // when every size is predicted equal (a task whose cost cannot be known).
  { name: 'FIFO pool', file: 'bench/servers/fifo-pool.js', openOnly: true },
  // The same service as a second server of the run: how far a p99 moves with nothing changed.
  { name: 'service, again', file: 'src/server.js', env: {}, openOnly: true },
  { name: 'FIFO pool, +150 µs a request', file: 'bench/servers/fifo-pool.js', env: { EXTRA_CPU_US: '150' }, openOnly: true },
  { name: 'service, no express thread', file: 'src/server.js', env: { POOL_EXPRESS_MAX_MS: '0' }, openOnly: true },
  { name: 'service, express up to 1 ms', file: 'src/server.js', env: { POOL_EXPRESS_MAX_MS: '1' }, openOnly: true },
  { name: 'service, LOG_REQUESTS=all', file: 'src/server.js', env: { LOG_REQUESTS: 'all' }, openOnly: true },
  { name: 'service, sizes unknown', file: 'src/server.js', env: { POOL_DEADLINE_FACTOR: '0', POOL_EXPRESS_MAX_MS: '0' }, openOnly: true },
  // The threads below the main thread: it then reads an answer without waiting for a computing
  // thread's time slice (bench/gaps.js with NICE).
  { name: 'service, POOL_THREAD_NICE=5', file: 'src/server.js', env: { POOL_THREAD_NICE: '5' }, openOnly: true },
  // The same order inside Piscina (its taskQueue): the other place for it.
  { name: 'Piscina taskQueue', file: 'bench/servers/piscina-deadline.js', openOnly: true }
].map((server, i) => ({ ...server, port: FIRST_PORT + i, peakRssBytes: 0 }))

requireTools([['wrk', 'Debian: apt-get install wrk'], ['k6', '. .ci/k6.sh builds it'], ['taskset', 'Debian: apt-get install util-linux']])
mkdirSync(OUT, { recursive: true })
const machine = { cpu: cpus()[0]?.model, cpus: N, node: process.version, date: new Date().toISOString().slice(0, 10) }
const write = (name, report, markdown, svg) => {
  writeFileSync(join(OUT, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`)
  writeFileSync(join(OUT, `${name}.md`), markdown(report))
  writeFileSync(join(OUT, svg.file), svg.draw(report))
  console.log(`bench: wrote ${join(OUT, `${name}.md`)}, ${name}.json and ${svg.file}`)
}

const CLOSED_SERVERS = SERVERS.filter((s) => !s.openOnly)
const openServers = SERVERS.filter((s) => OPEN_LOOP_SERVERS.includes(s.name))
await startAll([...new Set([...(args.suite !== 'open' ? CLOSED_SERVERS : []), ...(args.suite !== 'closed' ? openServers : [])])], N)
if (args.suite !== 'open') {
  const closed = await runClosed({ servers: CLOSED_SERVERS, threads: N, seconds: SECONDS, rounds: ROUNDS, log: console.log })
  write('results', { machine, ...closed }, closedMarkdown, { file: 'chart.svg', draw: chart })
}
if (args.suite !== 'closed') {
  const open = await runOpen({
    servers: openServers,
    peers: OPEN_PEERS,
    threads: N,
    seconds: OPEN_SECONDS,
    rounds: OPEN_ROUNDS,
    mix,
    limitSeconds: args.smoke ? 1 : 10,
    capacitySeconds: CAPACITY_SECONDS,
    ...(args.smoke && { loads: [0.5, 0.95] }),
    ...(args.loads && { loads: args.loads.split(',').map(Number) }),
    traceDir: args.trace,
    speedFrom: args.speed,
    log: console.log
  })
  const name = mixName === 'default' ? 'open-loop' : `open-loop-${mixName}`
  write(name, { machine, mixName, maxWaitMs: loadConfig({}).poolMaxWaitMs, ...open }, openMarkdown, { file: `${name}.svg`, draw: (report) => hockey(report, machine) })
}
process.exit(0)
