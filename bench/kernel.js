// node bench/kernel.js: where the main thread's time goes on the trivial path, the kernel's share
// included, which V8's profiler cannot see. fib(10) at concurrency 64 on bare Fastify (fib in the
// handler), the same made to spin 6 and 12 us a request (servers/spin.js: slower, nothing added)
// and the service at LOG_LEVEL=error. Each server runs under wrk while `perf record` samples its
// main thread; its CPU per request comes from /proc, split by perf into the kernel's part, the
// kernel's wake-up of the client (sock_def_readable, inside the socket write) and user space.
// Needs perf (Debian: linux-perf), and root or a low kernel.perf_event_paranoid. About 1 minute.
//
//   node bench/kernel.js                  # 2 rounds of 4 s per server; writes bench/out/kernel.md
//   BENCH_ROUNDS=3 BENCH_SECONDS=5 node bench/kernel.js
import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { TRIVIAL, wrk } from './closed.js'
import { mainThreadCpuMs, requireTools, startAll } from './proc.js'
import { median } from './stats.js'

const OUT = fileURLToPath(new URL('./out', import.meta.url))
const ROUNDS = Number(process.env.BENCH_ROUNDS || 2)
const SECONDS = Number(process.env.BENCH_SECONDS || 4)

requireTools([['wrk', 'Debian: apt-get install wrk'], ['perf', 'Debian: apt-get install linux-perf']])

const servers = [
  { name: 'bare Fastify', file: 'bench/servers/spin.js', env: { SPIN_US: '0' } },
  { name: 'bare Fastify, 6 us spin', file: 'bench/servers/spin.js', env: { SPIN_US: '6' } },
  { name: 'bare Fastify, 12 us spin', file: 'bench/servers/spin.js', env: { SPIN_US: '12' } },
  { name: 'service, LOG_LEVEL=error', file: 'src/server.js', env: { LOG_LEVEL: 'error' } }
].map((server, i) => ({ ...server, port: 4700 + i, runs: [] }))

// The share (0-1) of perf's samples in `file` on the line of `report` matching `pattern`.
function share (file, args, pattern) {
  const { stdout } = spawnSync('perf', ['report', '-i', file, '--stdio', '-g', 'none', ...args], { encoding: 'utf8' })
  const line = stdout.split('\n').find((l) => pattern.test(l))
  return line === undefined ? 0 : Number(line.match(/([\d.]+)%/)[1]) / 100
}

mkdirSync(OUT, { recursive: true })
await startAll(servers, 2)
for (let round = 0; round < ROUNDS; round++) {
  for (const server of servers) {
    const file = join(OUT, `kernel-${server.port}.data`)
    await wrk(`http://127.0.0.1:${server.port}/fib?num=${TRIVIAL}`, 64, 1)
    const load = wrk(`http://127.0.0.1:${server.port}/fib?num=${TRIVIAL}`, 64, SECONDS)
    await sleep(500)
    const before = mainThreadCpuMs(server.pid)
    const perf = spawnSync('perf', ['record', '-q', '-g', '-t', String(server.pid), '-o', file, '--', 'sleep', String(SECONDS - 1)])
    const cpuUs = (mainThreadCpuMs(server.pid) - before) * 1000
    const { rps } = await load
    if (perf.status !== 0) throw new Error(`perf record failed: ${perf.stderr}`)
    const perRequest = cpuUs / (rps * (SECONDS - 1))
    const kernel = share(file, ['--sort', 'dso'], /\[kernel\.kallsyms\]/)
    const wake = share(file, ['--children', '--sort', 'sym'], /\] sock_def_readable$/)
    server.runs.push({ rps, perRequest, kernel: kernel * perRequest, wake: wake * perRequest })
    console.log(`round ${round + 1} ${server.name.padEnd(26)} ${rps.toFixed(0).padStart(6)} req/s  ${perRequest.toFixed(1)} us a request, kernel ${(kernel * perRequest).toFixed(1)}, waking the client ${(wake * perRequest).toFixed(1)}`)
  }
}

const f = (x) => x.toFixed(1)
const m = (server, key) => median(server.runs.map((run) => run[key]))
const lines = [
  `# The trivial path with the kernel's share (${new Date().toISOString().slice(0, 10)}, fib(${TRIVIAL}) at 64, ${ROUNDS} rounds of ${SECONDS} s, medians)`, '',
  '| server | 2xx/s | main-thread CPU, us per request | kernel | of it, waking the client | user space |', '|---|---|---|---|---|---|',
  ...servers.map((s) => `| ${s.name} | ${m(s, 'rps').toFixed(0)} | ${f(m(s, 'perRequest'))} | ${f(m(s, 'kernel'))} | ${f(m(s, 'wake'))} | ${f(m(s, 'perRequest') - m(s, 'kernel'))} |`),
  ''
]
writeFileSync(join(OUT, 'kernel.md'), lines.join('\n'))
console.log(`${lines.join('\n')}\nbench: wrote bench/out/kernel.md`)
process.exit(0)
