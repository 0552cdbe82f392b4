// The open loop's client (bench/open.js), a process of its own as any load generator is. Open
// loop: requests evenly spaced at `rate` a second times the machine's speed of the moment, which
// the parent sends every 100 ms (bench/speed.js, `factor`), so the load stays the same share of
// what the machine can do while a shared host runs 1.5-2x slower for seconds at a time; each
// latency is given at the reference speed (times the mean speed while it ran). Closed loop: `vus`
// clients, each sending its next request when the last is answered. The i-th request's num is
// drawn from the mix as bench/k6/mix.js draws it, seeded with `seed`. The summary it sends back has
// the shape open.js reads: latency of the 200s per num, all of them, the 503s, and what could not
// be sent.
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { mixSequence } from './k6/mix.js'
import { Connections } from './raw-get.js'
import { percentile } from './stats.js'

// Requests in flight past which the next one is dropped, not sent: a server whose answers take
// seconds has rate x latency of them at once.
export const MAX_IN_FLIGHT = 3000
// How long any request may take; the window's last ones are waited for that long at most.
export const REQUEST_TIMEOUT_MS = 60_000
// The longest the open loop sleeps between sends (nextWakeMs).
const MAX_SLEEP_MS = 100

// p50, p99, p99.9 and max of `latencies`; undefined for none.
export function stats (latencies) {
  if (latencies.length === 0) return undefined
  const sorted = [...latencies].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), p999: percentile(sorted, 0.999), max: sorted.at(-1) }
}

// The mean speed from `fromMs` to `toMs` (epoch ms) of `factors`, [[epoch ms, factor], ...] in
// time order: of the readings in the interval, or else the last one before its end.
export function meanFactor (factors, fromMs, toMs) {
  let sum = 0
  let count = 0
  let before
  for (const [at, factor] of factors) {
    if (at > toMs) break
    if (at >= fromMs) {
      sum += factor
      count++
    } else {
      before = factor
    }
  }
  return count > 0 ? sum / count : before
}

// The summary of `answers` ({ num, status, ms, retryAfter }, ms at the reference speed) of a run
// over `mix`, with `dropped` requests never sent.
export function summarise (answers, mix, dropped) {
  const ok = answers.filter((a) => a.status === 200)
  const refused = answers.filter((a) => a.status === 503)
  return {
    all: stats(ok.map((a) => a.ms)),
    dropped,
    refused: { ...stats(refused.map((a) => a.ms)), count: refused.length, withoutRetryAfter: refused.filter((a) => !(a.retryAfter >= 1)).length },
    classes: Object.fromEntries(mix.map(([num]) => {
      const mine = ok.filter((a) => a.num === num)
      return [num, { ...stats(mine.map((a) => a.ms)), ok: mine.length, notOk: answers.filter((a) => a.num === num && a.status !== 200).length }]
    }))
  }
}

// The work a run's `summary` offered `threads` at the reference speed, as a share of them: the
// compute, by `classMs` (the limit's), of every request answered (200 or not) over the run's
// `seconds`. What the rate was meant to offer; where the rate follows a speed, what it did offer
// that window. Requests dropped (over MAX_IN_FLIGHT in flight) have no num on record and are left out.
export function offeredShare (summary, classMs, seconds, threads) {
  const ms = Object.entries(summary.classes).reduce((sum, [num, c]) => sum + (c.ok + c.notOk) * classMs[num], 0)
  return ms / (seconds * 1000 * threads)
}

// The 200s of a run's `summary` counted as tasks of the mix's mean cost: each weighted by its
// num's compute (`classMs`, the limit's) over the mean of the `mix`'s. A closed loop sends one
// draw of the mix, and C counted in tasks is what that draw carries: the first 3,000-4,000 of
// seed 0, which every measurement of C sends, hold 1.57-1.77% fib(35) where the default mix says
// 2%, and counted so read 0.9-3.7% more tasks a second than the mix would.
export function mixTasks (summary, mix, classMs) {
  const meanMs = mix.reduce((sum, [num, share]) => sum + share * classMs[num], 0)
  return Object.entries(summary.classes).reduce((sum, [num, c]) => sum + c.ok * classMs[num], 0) / meanMs
}

// What a load of 1 sends, a second at the reference speed, from C (`rps`) and C / limit as both
// ran (`ratio`): C, but never past the compute limit, which no server reaches: a C read past it
// was measured while the machine ran faster than while the limit was, and its shares would load
// the threads past what they were meant to.
export const loadRps = ({ rps, ratio }) => rps / Math.max(1, ratio)

// The machine's speed as the server's threads had it, from the 200s answered since `sinceMs`
// (epoch ms), `answers` in the order they came: their compute at the reference speed (`refMs`,
// by num) over their computeMs; undefined for none. The speed probes time short computations and
// take their median, so a thread kept off its CPU for part of a task does not slow them: on the
// slower machine the tasks' compute took 1.08-1.43 times their CPU time from one window to the
// next while the probes read the same speed (docs/benchmarks.md).
export function answerSpeed (answers, refMs, sinceMs) {
  let ref = 0
  let took = 0
  for (let i = answers.length - 1; i >= 0 && answers[i].at + answers[i].ms >= sinceMs; i--) {
    const { status, num, computeMs } = answers[i]
    if (status !== 200 || !(computeMs > 0)) continue
    ref += refMs[num]
    took += computeMs
  }
  return took > 0 ? ref / took : undefined
}

// One GET /fib?num=`num` on `connections`; resolves what came back: its status (0 for no answer),
// its latency in ms and when it was sent (epoch ms), and the Retry-After of a 503. With `trace`,
// also the computeMs of a 200's body (the body is read, which the client otherwise skips).
async function request (connections, num, trace) {
  const { body, ...answer } = await connections.get(`/fib?num=${num}`, trace)
  return { num, ...answer, ...(body !== undefined && { computeMs: JSON.parse(body).computeMs }) }
}

// How long the open loop sleeps with `owed` requests owed at `perMs` a millisecond: until the next
// one is due, 1 to MAX_SLEEP_MS (the speed it follows changes every 100 ms). Waking every
// millisecond whatever the rate, the client spent 136-163 ms of CPU a second sending 120 requests
// a second, against 114-119 this way: up to 2% of 2 cores taken from the server it measures.
export const nextWakeMs = (owed, perMs) => Math.min(MAX_SLEEP_MS, Math.max(1, (1 - owed) / perMs))

// Runs the load `start` asks for; `speed()` is the machine's speed now, `factors` its readings so
// far. With `refMs` (each num's compute at the reference speed), an open loop's rate follows the
// speed of the last second's answers instead (answerSpeed), the probes' until there are any, and a
// closed loop's summary holds the speed of all its answers (answerSpeed, undefined for none).
// Resolves the summary, with the CPU time this process spent a request sent (`clientUs`, µs: what
// the client takes from the server it measures); with `trace`, it also holds every 200 as it ran,
// in the order sent: [when it was sent (epoch ms), num, computeMs, latency in ms] (bench/orders.js
// replays them).
export async function drive ({ port, mix, seed, seconds, rate, vus, maxInFlight = MAX_IN_FLIGHT, trace = false, refMs }, speed, factors) {
  const connections = new Connections(port, REQUEST_TIMEOUT_MS)
  const numAt = mixSequence(mix, seed)
  const answers = []
  const pending = new Set()
  let sent = 0
  let dropped = 0
  const send = () => {
    if (pending.size >= maxInFlight) return dropped++
    const done = request(connections, numAt(sent++), trace || refMs !== undefined).then((answer) => {
      pending.delete(done)
      answers.push(answer)
    })
    pending.add(done)
    return done
  }
  const cpuFrom = process.cpuUsage()
  const started = performance.now()
  const running = () => performance.now() - started < seconds * 1000
  if (vus > 0) {
    await Promise.all(Array.from({ length: vus }, async () => {
      while (running()) await send()
    }))
  } else {
    // Requests owed so far: the first at once, then `rate` a second at the reference speed.
    let owed = 1
    const speedNow = refMs === undefined ? speed : () => answerSpeed(answers, refMs, Date.now() - 1000) ?? speed()
    for (let last = started, now = started; running(); last = now) {
      now = performance.now()
      const perMs = rate * speedNow() / 1000
      owed += perMs * (now - last)
      for (; owed >= 1; owed--) send()
      await sleep(nextWakeMs(owed, perMs))
    }
  }
  await Promise.all(pending)
  connections.destroy()
  const cpu = process.cpuUsage(cpuFrom)
  // A closed loop's answers give the speed of its whole run, as the open loop's give it of the moment.
  const answered = vus > 0 && refMs !== undefined ? answerSpeed(answers, refMs, -Infinity) : undefined
  const ran = trace ? answers.filter((a) => a.status === 200).sort((a, b) => a.at - b.at).map((a) => [a.at, a.num, a.computeMs, a.ms]) : undefined
  for (const answer of answers) answer.ms *= meanFactor(factors, answer.at, answer.at + answer.ms)
  return {
    ...summarise(answers, mix, dropped),
    ...(sent > 0 && { clientUs: (cpu.user + cpu.system) / sent }),
    ...(trace && { trace: ran }),
    ...(answered !== undefined && { answerSpeed: answered })
  }
}

// Forked by open.js: the first message starts the run ({ port, mix, seed, seconds, rate or vus,
// factor }), the next ones are the speed ({ at, factor }); the summary goes back, and the process
// ends.
if (process.send !== undefined) {
  process.once('message', async (start) => {
    const factors = [[Date.now(), start.factor]]
    process.on('message', ({ at, factor }) => factors.push([at, factor]))
    const summary = await drive(start, () => factors.at(-1)[1], factors)
    process.send(summary, () => process.exit(0))
  })
}
