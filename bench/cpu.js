// node bench/cpu.js: the CPU a request costs each server, all of them measured at once. One k6
// run offers every server the same open-loop load at the same time (the same rate, the same tasks
// in the same order), so when the machine's speed drifts, as a shared one's does within seconds,
// every server runs slower together: each server's CPU time a request, read against the
// service's from the same round, holds where runs one after the other do not. The CPU a request
// is what sets how busy a load keeps the machine, and so the tails at high load. For each
// server, as the scheduler counts its threads' time: its main thread, its other threads beside
// the pool (V8's GC and compiler, libuv), and its pool's threads or forked processes, where the
// tasks compute. Servers: the service, Fastify + Piscina, Fastify + postMessage (the worker_threads
// pool), the FIFO pool, the cluster prefork.
// Each is offered `--share` of the compute limit (bench/open.js), split evenly: the CPU a request
// depends on the rate (a main thread woken for each of fewer requests spends more on each), so the
// report gives it.
//
//   node bench/cpu.js                       # fib(27), 5 rounds of 15 s, about 2 min
//   node bench/cpu.js --mix default         # a mix: a name in open.js's MIXES, or JSON
//   node bench/cpu.js --share 0.8           # the servers together offered 0.8 of the limit
//   node bench/cpu.js --also 'LOG_LEVEL=warn'   # the service with a setting, beside the others
//   node bench/cpu.js --base HEAD~1         # the service against its code at a git ref, alone
//   BENCH_ROUNDS=1 BENCH_SECONDS=2 node bench/cpu.js
//
// With --base the peers are left out: the question is what a change to the service costs, and
// two servers at once get twice the rate each, where a request's share of the main thread's
// fixed costs (its timers, its wake-ups) is smaller. The ref's files come from `git archive`; it
// runs on this tree's node_modules.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { availableCpus } from '../src/cpus.js'
import { HEAVY } from './closed.js'
import { computeLimit, k6Summary, parseMix } from './open.js'
import { requireTools, schedOfTreeMs, startAll, threadCpuMs } from './proc.js'
import { median } from './stats.js'

const { values: args } = parseArgs({
  options: {
    // The closed loop's heavy task: the tasks' own CPU, which drifts with the machine, is a smaller
    // part of it than of the open loop's mixes, where it moves a server's total by up to 5% a round.
    mix: { type: 'string', default: `[[${HEAVY},1]]` },
    share: { type: 'string', default: '0.6' },
    // Variants of the service, each a setting, separated by ';': 'LOG_LEVEL=warn;POOL_EXPRESS_MAX_MS=0'.
    also: { type: 'string', default: '' },
    base: { type: 'string' }
  }
})
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5)
const SECONDS = Number(process.env.BENCH_SECONDS || 15)
const WARM_UP_SECONDS = Math.min(SECONDS, 5)
const LIMIT_SECONDS = Math.min(SECONDS, 5)
const K6_SCRIPT = fileURLToPath(new URL('./k6/side-by-side.js', import.meta.url))
const share = Number(args.share)
if (!(share > 0 && share <= 1)) {
  console.error(`bench: --share ${args.share} is invalid: expected a number over 0, at most 1`)
  process.exit(1)
}
const { name, mix } = parseMix(args.mix)
const what = mix.length === 1 ? `fib(${mix[0][0]})` : `${name} mix`

const ROOT = fileURLToPath(new URL('..', import.meta.url))

// The service's files at git ref `ref`, in a directory removed when this process exits; the path
// of its server.js from ROOT, as servers name their file.
function checkout (ref) {
  const dir = mkdtempSync(join(tmpdir(), 'cpu-base-'))
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  try {
    const archive = execFileSync('git', ['archive', '--format=tar', ref], { cwd: ROOT, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] })
    execFileSync('tar', ['-x', '-C', dir], { input: archive })
  } catch (err) {
    console.error(`bench: --base ${ref} is invalid: ${String(err.stderr ?? err.message).trim().split('\n')[0]}`)
    process.exit(1)
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  return relative(ROOT, join(dir, 'src/server.js'))
}

const peers = [
  { name: 'Fastify + Piscina', file: 'bench/servers/piscina.js' },
  // Fastify in front of the FIFO pool's threads: Fastify's part apart from Piscina's.
  { name: 'Fastify + postMessage', file: 'bench/servers/thread-pool.js' },
  { name: 'FIFO pool', file: 'bench/servers/fifo-pool.js' },
  // Its HTTP and its tasks run in forked processes: all of its time is theirs.
  { name: 'cluster prefork', file: 'bench/servers/cluster.js', forks: true }
]
const servers = [
  { name: 'service', file: 'src/server.js' },
  ...(args.base === undefined ? [] : [{ name: `service at ${args.base}`, file: checkout(args.base) }]),
  ...args.also.split(';').filter(Boolean).map((setting) => {
    const [, key, value] = setting.match(/^([A-Z_]+)=(.*)$/) ?? []
    if (key === undefined) {
      console.error(`bench: --also ${JSON.stringify(setting)} is invalid: expected SETTING=value`)
      process.exit(1)
    }
    return { name: `service, ${setting}`, file: 'src/server.js', env: { [key]: value } }
  }),
  ...(args.base === undefined ? peers : [])
].map((server, i) => ({ ...server, port: 4950 + i, rounds: [] }))

// Every thread of each server, in ms: main thread, its others beside the pool, and all.
function snapshot () {
  return servers.map(({ pid, forks }) => ({ ...(forks ? {} : threadCpuMs(pid)), all: schedOfTreeMs(pid) }))
}

// One k6 run of `seconds` against every server at once; each server's answers, 200 or not.
async function load (rate, seconds, seed) {
  const env = { PORTS: servers.map((s) => s.port).join(','), RATE: String(rate), MIX: JSON.stringify(mix), SEED: String(seed), DURATION: `${seconds}s` }
  const answers = await k6Summary(K6_SCRIPT, env, 'cpu')
  return servers.map((s) => answers[s.port])
}

requireTools([['k6', 'go install go.k6.io/k6@v1.8.1']])
const threads = availableCpus().cpus
const limit = await computeLimit(threads, LIMIT_SECONDS, mix)
const rate = Math.max(1, Math.round(share * limit.rps / servers.length))
await startAll(servers, threads)
await load(rate, WARM_UP_SECONDS, 0)
for (let round = 0; round < ROUNDS; round++) {
  const before = snapshot()
  const answers = await load(rate, SECONDS, round + 1)
  const after = snapshot()
  servers.forEach((server, i) => {
    const requests = answers[i].ok + answers[i].notOk
    const us = (part) => (after[i][part] === undefined ? undefined : (after[i][part] - before[i][part]) * 1000 / requests)
    server.rounds.push({ main: us('main'), helpers: us('helpers'), all: us('all'), notOk: answers[i].notOk })
  })
  const service = servers[0].rounds[round].all
  console.log(`round ${round + 1}: ${servers.map((s) => `${s.name} ${s.rounds[round].all.toFixed(0)} µs (${(s.rounds[round].all / service).toFixed(3)})`).join(', ')}`)
}

const f = (x, d) => (x === undefined ? '-' : x.toFixed(d))
const mid = (server, part) => median(server.rounds.map((r) => r[part]))
// Against the service's in the same round: median (lowest-highest).
function against (server, part) {
  if (server.rounds[0][part] === undefined) return '-'
  const ratios = server.rounds.map((r, round) => r[part] / servers[0].rounds[round][part])
  return `${f(median(ratios), 3)} (${f(Math.min(...ratios), 3)}-${f(Math.max(...ratios), 3)})`
}
const lines = [
  `${what}, ${rate} requests/s a server at once (${share} of the compute limit, ${limit.rps.toFixed(0)} tasks/s, split ${servers.length} ways), ${ROUNDS} rounds of ${SECONDS} s; ${threads} CPUs, Node ${process.version}`,
  'CPU µs a request, medians; against the service\'s, round by round: median (lowest-highest)',
  '',
  '| server | main thread | its other threads beside the pool | pool threads or forks | all | main thread ÷ service | all ÷ service | not 200 |',
  '|---|---|---|---|---|---|---|---|',
  ...servers.map((server) => {
    const pool = median(server.rounds.map((r) => r.all - (r.main ?? 0) - (r.helpers ?? 0)))
    const notOk = server.rounds.reduce((sum, r) => sum + r.notOk, 0)
    return `| ${server.name} | ${f(mid(server, 'main'), 0)} | ${f(mid(server, 'helpers'), 0)} | ${f(pool, 0)} | ${f(mid(server, 'all'), 0)} | ${against(server, 'main')} | ${against(server, 'all')} | ${notOk} |`
  })
]
// A refusal costs a server far less than an answer, so with any its CPU a request falls and its
// ratios compare nothing: most often the load was over what it carried at that moment.
const refusing = servers.filter((server) => server.rounds.some((r) => r.notOk > 0))
if (refusing.length > 0) lines.push('', `Not comparable: ${refusing.map((s) => s.name).join(', ')} left requests without a 200, whose CPU a request is not an answer's; run again, or with a lower --share.`)
console.log(`\n${lines.join('\n')}`)
process.exit(0)
