// The open-loop part of `npm run bench`: a mix of task sizes offered at a fixed rate, whatever the
// answers do, at shares of what this machine carries, measured in the same run. Closed-loop tools
// (wrk) slow their sending when the server slows down and so hide queueing; an open loop does not.
//
// The load axis: C, the best peer's throughput with the same client and the same mix, closed-loop
// (CAPACITY_VUS clients, each sending again when answered). Fractions of C are loads this machine
// carries with the client on the same cores; the compute limit (every thread computing the mix,
// no HTTP, no client) is printed beside it, and C / limit says how much the client and HTTP take.
//
// At the reference speed: a shared host computes 1.5-2x slower for seconds at a time (bench/speed.js),
// and a rate fixed for 20 s then offers 80% of C in one second and 140% in the next. So the client
// (open-client.js) sends at the rate times the machine's speed of the moment, and every figure is
// given at the speed of reference, each CPU's fastest second while the compute limit is measured:
// C and the limit divided by the mean speed while they were measured, latencies multiplied by it.
import { fork, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { loadRps, mixTasks, offeredShare } from './open-client.js'
import { cpuOfTreeMs, machineCpuMs, settle, threadCpuMs } from './proc.js'
import { HEALTHY_CAPACITY, pct0 } from './report.js'
import { watchSpeed } from './speed.js'
import { median, spread } from './stats.js'

const CLIENT = fileURLToPath(new URL('./open-client.js', import.meta.url))
const FASTEST = fileURLToPath(new URL('./fib.cjs', import.meta.url))
// [[num, share], ...]. default: 60% ~2 ms tasks, 30% ~5 ms, 8% ~13 ms, 2% ~55 ms on a fast hour;
// big: the biggest class carries most of the work (70% of tasks fib(26), 20% fib(30), 10% fib(34),
// which hold about 10%, 20% and 70% of the work).
export const MIXES = {
  default: [[28, 0.6], [30, 0.3], [32, 0.08], [35, 0.02]],
  big: [[26, 0.7], [30, 0.2], [34, 0.1]]
}
export const LOADS = [0.5, 0.7, 0.8, 0.9, 0.95]
// The closed loop that measures C: clients and seconds.
export const CAPACITY_VUS = 16
// The speed probes time each CPU this often, and the client's rate follows their median over the
// last SPEED_SPAN_MS, sent to it every SPEED_EVERY_MS.
const PROBE_EVERY_MS = 50
const SPEED_SPAN_MS = 500
const SPEED_EVERY_MS = 100

// A mix by name (MIXES) or as JSON ([[num, share], ...], shares summing to 1).
export function parseMix (text) {
  if (Object.hasOwn(MIXES, text)) return { name: text, mix: MIXES[text] }
  let mix
  try {
    mix = JSON.parse(text)
  } catch {}
  const valid = Array.isArray(mix) && mix.length > 0 &&
    mix.every((c) => Array.isArray(c) && Number.isInteger(c[0]) && c[0] >= 0 && c[0] <= 45 && c[1] > 0) &&
    Math.abs(mix.reduce((sum, [, share]) => sum + share, 0) - 1) < 1e-9
  if (!valid) throw new Error(`mix ${JSON.stringify(text)} is invalid: expected one of ${Object.keys(MIXES).join(', ')} or [[num, share], ...] with nums 0-45 and shares summing to 1`)
  return { name: 'custom', mix: [...mix].sort((a, b) => a[0] - b[0]) }
}

// Every thread computing the mix back to back for `seconds`, no HTTP, with the fastest form of the
// computation (bench/fib.cjs): tasks per second the machine can do at most, and the median
// compute time of each num. The limit is the threads over the mix's mean cost (each num's mean
// compute time at its share), not the count of tasks done, which depends on how many of the rare
// large tasks the draw held.
export async function computeLimit (threads, seconds, mix) {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { performance } = require('node:perf_hooks')
    const fib = require(workerData.fib)
    const times = Object.fromEntries(workerData.mix.map(([num]) => [num, []]))
    const time = (num) => {
      const started = performance.now()
      fib(num)
      times[num].push(performance.now() - started)
    }
    const end = Date.now() + workerData.ms
    while (Date.now() < end) {
      let u = Math.random()
      const [num] = workerData.mix.find(([, share]) => (u -= share) < 0) ?? workerData.mix.at(-1)
      time(num)
    }
    // A short run may never draw the rarest num: time it once more.
    for (const [num] of workerData.mix) if (times[num].length === 0) time(num)
    parentPort.postMessage(times)`
  const results = await Promise.all(Array.from({ length: threads }, () => new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { fib: FASTEST, mix, ms: seconds * 1000 } })
    worker.once('message', resolve)
    worker.once('error', reject)
  })))
  const times = Object.fromEntries(mix.map(([num]) => [num, results.flatMap((r) => r[num])]))
  const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length
  const meanCostMs = mix.reduce((sum, [num, share]) => sum + share * mean(times[num]), 0)
  return { rps: threads * 1000 / meanCostMs, classMs: Object.fromEntries(mix.map(([num]) => [num, median(times[num])])) }
}

// The steady middle of a measurement of `seconds`, in seconds from its start: past its start-up,
// before its drain.
const steadyPart = (seconds) => [Math.min(2, seconds / 4), seconds * 0.9]

// Runs k6 `script` with `env` (each as -e) and an OUT path for the JSON its handleSummary writes
// there; resolves that JSON. `name` keeps the files of concurrent runs apart.
export function k6Summary (script, env, name) {
  const out = join(tmpdir(), `${name}-${process.pid}.json`)
  const args = ['run', '-q', '--no-color', ...Object.entries({ ...env, OUT: out }).flatMap(([k, v]) => ['-e', `${k}=${v}`]), script]
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

// One run of the client (open-client.js) against `port` with the draw of the mix `seed`: open loop
// at `load.rate` requests per second at the reference speed, or closed loop with `load.vus`
// clients (`load.trace`: with the trace of its 200s); its summary, and the machine's mean speed
// over the run.
function drive (port, load, seconds, mix, seed, speed) {
  const now = () => speed.factor(Date.now() - SPEED_SPAN_MS, Date.now())
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = fork(CLIENT, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
    let stderr = ''
    let summary
    child.stderr.on('data', (chunk) => { stderr += chunk })
    // A message the child can no longer read (it has sent its summary and is ending) is dropped.
    const send = (message) => { if (child.connected) child.send(message, () => {}) }
    const timer = setInterval(() => {
      const factor = now()
      if (factor !== undefined) send({ at: Date.now(), factor })
    }, SPEED_EVERY_MS)
    child.on('message', (message) => {
      clearInterval(timer)
      summary = message
    })
    send({ port, mix, seed, seconds, ...load, factor: now() ?? 1 })
    child.on('exit', (code) => {
      clearInterval(timer)
      if (summary === undefined) reject(new Error(`the open loop's client exited ${code} without a summary: ${stderr.slice(-500)}`))
      else resolve({ summary, speed: speed.factor(started, Date.now()) })
    })
  })
}

// Shares of the machine's CPU time from `fromS` to `toS` seconds after the call, the steady middle
// of a run (past its start-up, before its drain): busy, stolen by the hypervisor, and used by
// `server` (all its processes and threads); and, for a server of one process (not `forks`)
// offered `rate` requests a second, the CPU time of its main thread, of its pool's threads and of
// its other threads (mainUs, poolUs, helpersUs: µs a request at the reference speed: the client
// sends `rate` times the speed, and each request takes the inverse of it in CPU time, so the CPU
// time over the requests `rate` offers), where what a server spends beside the tasks shows. Call the
// returned function when the run is over; undefined if the window did not close.
function cpuWindow ({ pid, forks }, fromS, toS, rate) {
  const read = () => ({ machine: machineCpuMs(), server: cpuOfTreeMs(pid), threads: forks ? undefined : threadCpuMs(pid) })
  let first, last
  const timers = [setTimeout(() => { first = read() }, fromS * 1000), setTimeout(() => { last = read() }, toS * 1000)]
  return () => {
    timers.forEach(clearTimeout)
    if (first === undefined || last === undefined) return undefined
    const total = last.machine.total - first.machine.total
    const requests = rate * (toS - fromS)
    const perRequest = (part) => (first.threads && last.threads ? (last.threads[part] - first.threads[part]) * 1000 / requests : undefined)
    return {
      busy: (last.machine.busy - first.machine.busy) / total,
      steal: (last.machine.steal - first.machine.steal) / total,
      server: (last.server - first.server) / total,
      mainUs: perRequest('main'),
      poolUs: perRequest('pool'),
      helpersUs: perRequest('helpers')
    }
  }
}

// The figures of one run: goodput, share not answered 200, percentiles of all and of each class.
function figures (summary, seconds, cpu) {
  const classes = Object.values(summary.classes)
  const ok = classes.reduce((sum, c) => sum + c.ok, 0)
  const offered = ok + classes.reduce((sum, c) => sum + c.notOk, 0) + summary.dropped
  return {
    goodput: ok / seconds,
    notOkShare: offered === 0 ? 0 : 1 - ok / offered,
    ...summary.all,
    refused: summary.refused,
    classes: summary.classes,
    cpu,
    clientUs: summary.clientUs
  }
}

// Rounds of one server at one load, as medians with their spread: [median, min, max].
function summarise (runs, mix) {
  const pick = (read) => spread(runs.map(read))
  return {
    rounds: runs.length,
    goodput: pick((r) => r.goodput),
    notOkShare: pick((r) => r.notOkShare),
    p50: pick((r) => r.p50),
    p99: pick((r) => r.p99),
    classes: Object.fromEntries(mix.map(([num]) => [num, { p50: pick((r) => r.classes[num].p50), p99: pick((r) => r.classes[num].p99) }])),
    speed: pick((r) => r.speed),
    offered: pick((r) => r.offered),
    refused: { count: pick((r) => r.refused.count), p99: pick((r) => r.refused.p99), withoutRetryAfter: runs.reduce((sum, r) => sum + r.refused.withoutRetryAfter, 0) },
    clientUs: pick((r) => r.clientUs),
    cpu: { busy: pick((r) => r.cpu?.busy), server: pick((r) => r.cpu?.server), steal: pick((r) => r.cpu?.steal), mainUs: pick((r) => r.cpu?.mainUs), poolUs: pick((r) => r.cpu?.poolUs), helpersUs: pick((r) => r.cpu?.helpersUs) },
    // Each round's p99, overall and per class, in round order: the report reads ratios round by round.
    byRound: { p99: runs.map((r) => r.p99), classes: Object.fromEntries(mix.map(([num]) => [num, runs.map((r) => r.classes[num].p99)])) }
  }
}

// C: each peer's closed-loop throughput with `vus` clients at the reference speed, the best of
// them, in tasks of the mix's mean cost a second (mixTasks, by `classMs`); and, for the report
// only, what `subject` (the service) carries the same way. With `refMs` (`--speed answers`), the
// speed is the one its answers report, the same the open loop's rate then follows, so that a
// share of C is the same load from run to run.
async function capacity ({ peers, subject, seconds, vus, mix, classMs, speed, refMs, log }) {
  const rps = {}
  const speeds = {}
  const raw = {}
  for (const server of [...peers, subject]) {
    const run = await drive(server.port, { vus, refMs }, seconds, mix, 0, speed)
    await settle(server.pid)
    speeds[server.name] = run.summary.answerSpeed ?? run.speed
    raw[server.name] = mixTasks(run.summary, mix, classMs) / seconds
    rps[server.name] = raw[server.name] / speeds[server.name]
    log(`open loop: ${server.name} carries ${rps[server.name].toFixed(0)} tasks/s closed-loop at the reference speed (${vus} clients, ${seconds} s, the machine at ${speeds[server.name].toFixed(2)} of it${refMs === undefined ? '' : ` by its answers, ${run.speed.toFixed(2)} by the probes`}; its client ${run.summary.clientUs?.toFixed(0) ?? '-'} µs of CPU a request)`)
  }
  const best = peers.map((s) => s.name).reduce((a, b) => (rps[b] > rps[a] ? b : a))
  const own = rps[subject.name]
  delete rps[subject.name]
  return { rps: rps[best], by: best, peers: rps, own, vus, seconds, speed: speeds[best], raw: raw[best] }
}

// Until every speed probe has a fastest second to take as its reference (bench/speed.js, `fix`).
async function fixSpeed (speed) {
  for (let waited = 0; !speed.fix(); waited += 100) {
    if (waited > 10_000) throw new Error('the speed probes gave no timings in 10 s: is taskset allowed here?')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

// Measures the compute limit and C, `rounds` times, then `rounds` times every load on every server,
// the order of the servers rotated each round; reports each figure's median over the rounds and its
// spread. At the reference speed C holds still but for the error of each measurement (with the
// probes' readings followed whole, one taken while they read 0.65 of that speed read 15% over the
// two taken nearer it), and the median of its measurements sets the rates of every round. The speed
// probes' references are taken while the limit is first measured, and hold for the whole run.
// C / limit pairs each measurement of C with the limit measured just before it, both as they ran:
// the probes read the machine differently with the threads computing alone than with a server and
// its client (0.76 against 0.59-0.63 of the reference in one run), so the two at the reference
// speed, with the probes' readings followed whole, read C at 1.22 of the limit where the
// measurements themselves read 0.98.
// `peers` name the servers C is measured with; the first of `servers` is the one judged (the
// service). `log` prints progress.
// With `traceDir`, each open-loop run's 200s as they ran (open-client.js: when sent, num,
// computeMs, latency; none at the reference speed) go to a file there, for bench/orders.js to
// replay: { server, mix, load, round, tasks }.
// `speedFrom`: what the open loop's rate follows and C is divided by, 'probes' or 'answers' (the
// compute the answers report against the limit's, open-client.js's answerSpeed).
export async function runOpen ({ servers, peers, threads, seconds, rounds, loads = LOADS, mix, limitSeconds, capacitySeconds, traceDir, speedFrom = 'probes', log }) {
  const speed = watchSpeed(undefined, { everyMs: PROBE_EVERY_MS })
  const began = Date.now()
  const measured = await computeLimit(threads, limitSeconds, mix)
  await fixSpeed(speed)
  const limitSpeed = speed.factor(began, Date.now())
  const limit = {
    rps: measured.rps / limitSpeed,
    classMs: Object.fromEntries(Object.entries(measured.classMs).map(([num, ms]) => [num, ms * limitSpeed])),
    speed: limitSpeed
  }
  // With `--speed answers`, what the answers' compute is read against: C's and each window's rate.
  const refMs = speedFrom === 'answers' ? limit.classMs : undefined
  log(`open loop: mix ${JSON.stringify(mix)}; compute limit ${limit.rps.toFixed(0)} tasks/s on ${threads} threads at the reference speed (the machine at ${limitSpeed.toFixed(2)} of it); ${Object.entries(limit.classMs).map(([n, ms]) => `fib(${n}) ${ms.toFixed(2)} ms`).join(', ')}`)
  const capacities = []
  for (let round = 0; round < rounds; round++) {
    const limitRps = round === 0 ? measured.rps : (await computeLimit(threads, limitSeconds, mix)).rps
    capacities.push({ ...await capacity({ peers: servers.filter((s) => peers.includes(s.name)), subject: servers[0], seconds: capacitySeconds, vus: CAPACITY_VUS, mix, classMs: limit.classMs, speed, refMs, log }), limitRps })
  }
  const c = overRounds(capacities)
  log(`open loop: C = ${c.rps.toFixed(0)} tasks/s (${c.by}), the median of ${c.byRound.map((rps) => rps.toFixed(0)).join(', ')}; ${c.ratio.toFixed(2)} of the compute limit (each over the limit just before it: ${c.ratioByRound.map((r) => r.toFixed(2)).join(', ')})${c.warning ? `: below ${HEALTHY_CAPACITY}, the client or the harness is eating the machine` : ''}${c.capped ? `: over 1, the machine ran faster for C than for the limit, and the loads are shares of ${c.loadRps.toFixed(0)} tasks/s, C / (C / limit)` : ''}`)
  const runs = {}
  for (let round = 0; round < rounds; round++) {
    for (const load of loads) {
      const order = servers.map((_, i) => servers[(i + round) % servers.length])
      for (const server of order) {
        const point = `round ${round + 1} load ${(load * 100).toFixed(0).padStart(3)}% of C`
        const steady = steadyPart(seconds)
        const started = Date.now()
        const cpu = cpuWindow(server, ...steady, load * c.loadRps)
        const run = await drive(server.port, { rate: load * c.loadRps, trace: traceDir !== undefined, refMs }, seconds, mix, round, speed)
        const result = figures(run.summary, seconds, cpu())
        if (traceDir !== undefined) writeTrace(traceDir, { server: server.name, mix, load, round: round + 1, tasks: run.summary.trace })
        result.speed = speed.factor(...steady.map((s) => started + s * 1000))
        result.offered = offeredShare(run.summary, limit.classMs, seconds, threads)
        const waited = await settle(server.pid)
        if (waited > 0) log(`${point} ${server.name}: busy ${waited} ms after the client stopped`)
        ;((runs[load] ??= {})[server.name] ??= []).push(result)
        log(`${point} ${server.name.padEnd(20)} p99 ${result.p99?.toFixed(1) ?? '-'} ms (${mix.map(([num]) => result.classes[num].p99?.toFixed(0) ?? '-').join(' / ')}), not 200: ${(result.notOkShare * 100).toFixed(2)}%, the machine at ${result.speed?.toFixed(2) ?? '-'} of the reference speed, work offered ${result.offered.toFixed(2)} of the threads, busy ${pct0(result.cpu?.busy)}, server ${pct0(result.cpu?.server)}${result.cpu?.mainUs === undefined ? '' : `, µs a request: main thread ${result.cpu.mainUs.toFixed(0)}, pool ${result.cpu.poolUs.toFixed(0)}, others ${result.cpu.helpersUs.toFixed(0)}`}, client ${result.clientUs?.toFixed(0) ?? '-'} µs a request`)
      }
    }
  }
  speed.stop()
  const results = Object.fromEntries(loads.map((load) => [load, Object.fromEntries(servers.map(({ name }) => [name, summarise(runs[load][name], mix)]))]))
  return { limit, capacity: c, loads, seconds, rounds, mix, peers, speedFrom, results }
}

function writeTrace (dir, trace) {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${trace.server.replace(/\W+/g, '-')}-${Math.round(trace.load * 100)}-${trace.round}.json`)
  writeFileSync(file, `${JSON.stringify(trace)}\n`)
}

// The measurements of C as one: medians of each server's closed-loop throughput, the best peer by
// its median, each measurement's C in order and the machine's speed while it was taken; and C /
// limit, the median of each measurement's over the limit measured before it, as both ran.
// The loads are shares of loadRps: C, or the limit when C read past it.
function overRounds (capacities) {
  const peers = Object.fromEntries(Object.keys(capacities[0].peers).map((name) => [name, median(capacities.map((c) => c.peers[name]))]))
  const by = Object.keys(peers).reduce((a, b) => (peers[b] > peers[a] ? b : a))
  const rps = median(capacities.map((c) => c.rps))
  const { vus, seconds } = capacities[0]
  const ratioByRound = capacities.map((c) => c.raw / c.limitRps)
  const ratio = median(ratioByRound)
  const base = loadRps({ rps, ratio })
  return { rps, by, peers, own: median(capacities.map((c) => c.own)), vus, seconds, byRound: capacities.map((c) => c.rps), speedByRound: capacities.map((c) => c.speed), ratio, ratioByRound, limitByRound: capacities.map((c) => c.limitRps), warning: ratio < HEALTHY_CAPACITY, loadRps: base, capped: base < rps }
}
