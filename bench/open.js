// The open-loop part of `npm run bench`: the mixed workload offered at a fixed rate, whatever the
// answers do, at shares of this machine's compute limit measured in the same run. Closed-loop
// tools (wrk) slow their sending when the server slows down and so hide queueing; k6's
// constant-arrival-rate does not.
import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { cpuOfTreeMs, machineCpuMs, settle } from './proc.js'
import { pct0 } from './report.js'
import { simulate } from './sim.js'
import { median } from './stats.js'

const K6_SCRIPT = fileURLToPath(new URL('./k6/open-loop.js', import.meta.url))
const FIB = fileURLToPath(new URL('../workers/fib.js', import.meta.url))
// num and share: 60% ~2 ms tasks, 30% ~6 ms, 8% ~16 ms, 2% ~70 ms on this machine.
export const MIX = [[28, 0.6], [30, 0.3], [32, 0.08], [35, 0.02]]
export const LOADS = [0.5, 0.7, 0.8, 0.9, 1, 1.2]

// Every thread computing the mix back to back for `seconds`, no HTTP: tasks per second the
// machine can do at most, and the median compute time of each num. The limit is the threads over
// the mix's mean cost (each num's mean compute time at its share), not the count of tasks done:
// that count depends on how many of the rare large tasks the draw held (2% of fib(35), 30 times a
// fib(28)), and a lucky draw once put the limit 8% above what the mix costs (`drawnRps`).
export async function computeLimit (threads, seconds) {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    import(workerData.fib).then(({ default: fib }) => {
      const times = Object.fromEntries(workerData.mix.map(([num]) => [num, []]))
      const end = Date.now() + workerData.ms
      let tasks = 0
      while (Date.now() < end) {
        let u = Math.random()
        const [num] = workerData.mix.find(([, share]) => (u -= share) < 0) ?? workerData.mix.at(-1)
        times[num].push(fib({ num }).computeMs)
        tasks++
      }
      // A short run may never draw the rarest num: time it once, outside the count.
      for (const [num] of workerData.mix) if (times[num].length === 0) times[num].push(fib({ num }).computeMs)
      parentPort.postMessage({ tasks, times })
    })`
  const results = await Promise.all(Array.from({ length: threads }, () => new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { fib: FIB, mix: MIX, ms: seconds * 1000 } })
    worker.once('message', resolve)
    worker.once('error', reject)
  })))
  const times = Object.fromEntries(MIX.map(([num]) => [num, results.flatMap((r) => r.times[num])]))
  const meanCostMs = MIX.reduce((sum, [num, share]) => sum + share * times[num].reduce((a, b) => a + b, 0) / times[num].length, 0)
  return {
    rps: threads * 1000 / meanCostMs,
    drawnRps: results.reduce((sum, r) => sum + r.tasks, 0) / seconds,
    classMs: Object.fromEntries(MIX.map(([num]) => [num, median(times[num])]))
  }
}

// One k6 run at `rate` requests per second against `port`, with the draw of the mix `seed`; its
// summary (bench/k6/open-loop.js).
function k6 (port, rate, seconds, seed) {
  const out = join(tmpdir(), `open-loop-${process.pid}-${port}.json`)
  const env = { BASE_URL: `http://127.0.0.1:${port}`, RATE: String(Math.round(rate)), DURATION: `${seconds}s`, MIX: JSON.stringify(MIX), SEED: String(seed), OUT: out }
  const args = ['run', '-q', '--no-color', ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), K6_SCRIPT]
  return new Promise((resolve, reject) => {
    const child = spawn('k6', args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk) => { stderr += chunk })
    child.on('error', reject)
    child.on('close', (code) => {
      try {
        const summary = JSON.parse(readFileSync(out, 'utf8'))
        rmSync(out)
        resolve(summary)
      } catch {
        reject(new Error(`k6 exited ${code} without a summary: ${stderr.slice(-500)}`))
      }
    })
  })
}

// Shares of the machine's CPU time from `fromS` to `toS` seconds after the call, the steady middle
// of a k6 run (past its start-up, before its drain): busy, stolen by the hypervisor, and used by
// the server `pid` (all its processes and threads). Call the returned function when the run is
// over; undefined if the window did not close.
function cpuWindow (pid, fromS, toS) {
  const read = () => ({ machine: machineCpuMs(), server: cpuOfTreeMs(pid) })
  let first, last
  const timers = [setTimeout(() => { first = read() }, fromS * 1000), setTimeout(() => { last = read() }, toS * 1000)]
  return () => {
    timers.forEach(clearTimeout)
    if (first === undefined || last === undefined) return undefined
    const total = last.machine.total - first.machine.total
    return {
      busy: (last.machine.busy - first.machine.busy) / total,
      steal: (last.machine.steal - first.machine.steal) / total,
      server: (last.server - first.server) / total
    }
  }
}

// Per server and load, the figures of one run: goodput, share not answered 200, percentiles.
function figures (summary, seconds, cpu) {
  const classes = Object.values(summary.classes)
  const ok = classes.reduce((sum, c) => sum + c.ok, 0)
  const offered = ok + classes.reduce((sum, c) => sum + c.notOk, 0) + summary.dropped
  return {
    offered,
    goodput: ok / seconds,
    notOkShare: offered === 0 ? 0 : 1 - ok / offered,
    ...summary.all,
    refused: summary.refused,
    classes: summary.classes,
    cpu
  }
}

// Runs every load on every server, in a rotating order, `rounds` times; keeps the run with the
// median p99 of each server and load. `log` prints progress.
export async function runOpen ({ servers, threads, seconds, rounds, loads = LOADS, limitSeconds, log }) {
  const limit = await computeLimit(threads, limitSeconds)
  log(`open loop: compute limit ${limit.rps.toFixed(0)} tasks/s on ${threads} threads (${limit.drawnRps.toFixed(0)} counted in the draw); ${Object.entries(limit.classMs).map(([n, ms]) => `fib(${n}) ${ms.toFixed(2)} ms`).join(', ')}`)
  const runs = {}
  for (let round = 0; round < rounds; round++) {
    for (const load of loads) {
      const order = servers.map((_, i) => servers[(i + round) % servers.length])
      for (const server of order) {
        const cpu = cpuWindow(server.pid, Math.min(2, seconds / 4), seconds * 0.9)
        const result = figures(await k6(server.port, load * limit.rps, seconds, round), seconds, cpu())
        ;((runs[load] ??= {})[server.name] ??= []).push(result)
        const point = `round ${round + 1} load ${(load * 100).toFixed(0).padStart(3)}%`
        log(`${point} ${server.name.padEnd(20)} p99 ${result.p99?.toFixed(1) ?? '-'} ms, not 200: ${(result.notOkShare * 100).toFixed(2)}%, machine busy ${pct0(result.cpu?.busy)}, server ${pct0(result.cpu?.server)}`)
        const waited = await settle(server.pid)
        if (waited > 0) log(`${point} ${server.name}: busy ${waited} ms after k6 stopped`)
      }
    }
  }
  const results = {}
  for (const load of loads) {
    results[load] = {}
    for (const { name } of servers) {
      const sorted = runs[load][name].sort((a, b) => (a.p99 ?? Infinity) - (b.p99 ?? Infinity))
      results[load][name] = sorted[(sorted.length - 1) >> 1]
    }
  }
  // What a model of each policy gives at these loads, with the measured compute times.
  const classes = MIX.map(([num, share]) => [num, limit.classMs[num], share])
  const model = Object.fromEntries(loads.filter((load) => load < 1).map((load) => [load,
    Object.fromEntries(['per-process', 'shared', 'cheapest'].map((policy) => [policy, simulate(policy, load, classes, threads)]))]))
  return { limit, loads, seconds, rounds, mix: MIX, results, model }
}
