// node bench/promotion.js: what a request served leaves in the main thread's old space, and what
// the collections cost it. Bytes moved into the old space come back only through the collection
// of the whole heap, and each scavenge copies them first: the more a request leaves there, the
// longer the main thread's pauses. A count of bytes, not a speed, so it holds on a machine whose
// speed drifts. Servers: the service; Fastify + Piscina, as shipped and with the pool's one view
// of each thread (src/pool/thread-views.js); the FIFO pool. Each is driven in turn by wrk (fib(20),
// 4 connections) while a window on its collections is open (bench/servers/gc-window.js);
// medians over the rounds. With a dearer task (BENCH_NUM) every thread computes while requests
// wait for it, as in the closed loop, and the servers of Fastify and Piscina move far more into
// the old space.
//
//   node bench/promotion.js                 # 5 rounds of 8 s a server, about 3 min
//   BENCH_NUM=27 node bench/promotion.js    # fib(27), the closed loop's heavy task
//   BENCH_ROUNDS=1 BENCH_SECONDS=1 node bench/promotion.js
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { availableCpus } from '../src/cpus.js'
import { wrk } from './closed.js'
import { requireTools, startAll } from './proc.js'
import { median } from './stats.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS || 5)
const SECONDS = Number(process.env.BENCH_SECONDS || 8)
const WARM_UP_SECONDS = Math.min(SECONDS, 3)
const NUM = Number(process.env.BENCH_NUM || 20)
const CONNECTIONS = 4

const preload = (file) => ['--import', fileURLToPath(new URL(file, import.meta.url))]
const windowDir = mkdtempSync(join(tmpdir(), 'gc-window-'))
process.on('exit', () => rmSync(windowDir, { recursive: true, force: true }))
const servers = [
  { name: 'service', file: 'src/server.js' },
  { name: 'Fastify + Piscina', file: 'bench/servers/piscina.js' },
  { name: 'Fastify + Piscina, one view a thread', file: 'bench/servers/piscina.js', views: true },
  { name: 'FIFO pool', file: 'bench/servers/fifo-pool.js' }
].map((server, i) => ({
  ...server,
  port: 4900 + i,
  env: { GC_WINDOW_DIR: windowDir },
  nodeArgs: [...preload('./servers/gc-window.js'), ...(server.views ? preload('./servers/with-thread-views.js') : [])]
}))

// The window's report, once the server has written it.
async function report (pid) {
  const file = join(windowDir, `${pid}.json`)
  for (let i = 0; i < 100; i++) {
    try {
      const window = JSON.parse(readFileSync(file, 'utf8'))
      rmSync(file)
      return window
    } catch {
      await sleep(50)
    }
  }
  throw new Error(`no GC window from ${pid}`)
}

requireTools([['wrk', 'Debian: apt-get install wrk']])
await startAll(servers, availableCpus().cpus)
const url = ({ port }) => `http://127.0.0.1:${port}/fib?num=${NUM}`
for (const server of servers) await wrk(url(server), CONNECTIONS, WARM_UP_SECONDS)
const rows = Object.fromEntries(servers.map(({ name }) => [name, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const server of round % 2 ? [...servers].reverse() : servers) {
    server.child.kill('SIGWINCH')
    const { rps } = await wrk(url(server), CONNECTIONS, SECONDS)
    server.child.kill('SIGWINCH')
    const window = await report(server.pid)
    const requests = rps * SECONDS
    rows[server.name].push({
      promoted: window.promotedBytes / requests,
      pause: window.scavengeMs / Math.max(1, window.scavenges),
      gcMs: (window.scavengeMs + window.oldSpaceMs) * 1000 / requests,
      collections: window.oldSpaceCollections * 10_000 / requests
    })
  }
}

console.log(`fib(${NUM}) at ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s a server: medians`)
const WIDTH = 18
console.log(`${'server'.padEnd(38)}${['old space B/req', 'ms/scavenge', 'GC ms/1k req', 'old GCs/10k req'].map((h) => h.padStart(WIDTH)).join('')}`)
for (const [name, runs] of Object.entries(rows)) {
  const cell = (key, digits) => median(runs.map((run) => run[key])).toFixed(digits).padStart(WIDTH)
  console.log(`${name.padEnd(38)}${cell('promoted', 0)}${cell('pause', 2)}${cell('gcMs', 2)}${cell('collections', 2)}`)
}
process.exit(0)
