// The benchmark's reports: bench/results.md (closed loop) and bench/open-loop.md (open loop),
// their tables and the goals.
import { HEALTH_EVERY_MS, HEAVY, TRIVIAL } from './closed.js'
import { spread } from './stats.js'

const f = (x, d = 1) => (x === undefined || x === null ? '-' : x.toFixed(d))
const pct = (x) => `${(x * 100).toFixed(2)}%`
// A share as a whole percentage, '-' when not measured.
export const pct0 = (x) => (x === undefined ? '-' : `${(x * 100).toFixed(0)}%`)
const ratio = (a, b) => (a > 0 && b > 0 ? a / b : undefined)
// Below this C / limit, the client or the harness is eating the machine.
export const HEALTHY_CAPACITY = 0.85

// Goals of the service's queue, against the best peer at each load (the lowest median), as
// shares of C: overall p99 by load, the smallest class, the biggest against the FIFO pool, and
// what may go unanswered. At OVERLOAD, refusals are fast and honest and what is admitted waits
// no longer than POOL_MAX_WAIT_MS.
const GOAL_LOADS = [0.5, 0.7, 0.8, 0.9]
const overallGoal = (load) => (load <= 0.7 ? 1 : 0.9)
const notOkGoal = (load) => (load <= 0.8 ? 0.001 : 0.005)
const SMALL_GOAL = 0.6
const BIG_GOAL = 2
const OVERLOAD = 0.95
const FAST_REFUSAL_MS = 100
const SERVICE = 'service'
const FIFO_POOL = 'FIFO pool'

// The rounds' highest C over their lowest beyond this, C being at the reference speed: the speed
// probes did not follow the machine's drift (a quiet machine's rounds stay within about 7%), so
// servers minutes apart met different machines.
const DRIFT = 1.15

// [median, min, max] as "median (min-max)".
const m = (x, d = 1) => (x === undefined ? '-' : f(x[0], d))
const ms = (x, d = 0) => (x === undefined ? '-' : `${f(x[0], d)} (${f(x[1], d)}-${f(x[2], d)})`)

export function openMarkdown ({ machine, limit, capacity, loads, seconds, rounds, mix, mixName, peers, maxWaitMs, speedFrom = 'probes', results }) {
  const servers = Object.keys(results[loads[0]])
  const small = mix[0][0]
  const big = mix.at(-1)[0]
  const drift = Math.max(...capacity.byRound) / Math.min(...capacity.byRound)
  const lines = [
    `# Open-loop benchmark: the ${mixName} mix at a fixed arrival rate`,
    '',
    `Measured by \`npm run bench\` on ${machine.date}: ${machine.cpu}, ${machine.cpus} CPUs for the process, Node ${machine.node}.`,
    `The open loop's client (\`bench/open-client.js\`) on the same machine and cores, requests evenly spaced, ${seconds} s per server and load, ${rounds} round${rounds === 1 ? '' : 's'} with the order of the servers rotated; each figure is the median over the rounds, with the lowest and highest in brackets.`,
    `Every figure is at the reference speed, each CPU's fastest second while the compute limit was first measured: the machine's speed was read throughout (\`bench/speed.js\`, a probe on each CPU), the client sent at the rate times the speed of the moment${speedFrom === 'answers' ? ' (`--speed answers`: the speed of the last second\'s answers, their compute against the limit\'s; C is divided by the speed of its own answers)' : ''}, and C and the limit are divided by the mean speed while they were measured, latencies and compute times multiplied by it. The machine ran at ${f(limit.speed, 2)} of the reference speed while the limit was first measured, ${capacity.speedByRound.map((x) => f(x, 2)).join(', ')} while C was (the best peer's measurements), and each window's speed is in the tables.`,
    `Mix: ${mix.map(([num, share]) => `${+(share * 100).toFixed(1)}% fib(${num})`).join(', ')}; compute times ${mix.map(([num]) => `fib(${num}) ${f(limit.classMs[num], 2)} ms`).join(', ')}.`,
    `Loads are shares of C, the best peer's throughput with the same client and mix closed-loop (${capacity.vus} clients, ${capacity.seconds} s), measured ${capacity.byRound.length} time${capacity.byRound.length === 1 ? '' : 's'} at the start of the run (${capacity.byRound.map((rps) => f(rps, 0)).join(', ')} tasks/s), the median setting the rates of every round: **C = ${f(capacity.rps, 0)} tasks/s** (medians: ${Object.entries(capacity.peers).map(([name, rps]) => `${name} ${f(rps, 0)}`).join(', ')}; the service, measured the same way, ${f(capacity.own, 0)}).`,
    `The compute limit (every thread computing the mix, no HTTP, no client) is ${f(limit.rps, 0)} tasks/s; each measurement of C is ${capacity.ratioByRound.map((r) => f(r, 2)).join(', ')} of the limit measured just before it, both as they ran (at the reference speed the two are not comparable: the probes read the machine differently with the threads computing alone than with a server and its client): **C / limit = ${f(capacity.ratio, 2)}**${capacity.warning ? `, **below ${HEALTHY_CAPACITY}: the client or the harness is eating the machine, and the loads are lower than they look**` : ''}${capacity.capped ? `, **over 1: C is past what the threads computed with no HTTP at all, which no server reaches; the machine ran faster while C was measured than while the limit was, and the loads are shares of C / (C / limit) = ${f(capacity.loadRps, 0)} tasks/s**` : ''}.${drift > DRIFT ? ` **C moved by ${f((drift - 1) * 100, 0)}% between measurements, past ${f((DRIFT - 1) * 100, 0)}%, at the reference speed: the machine drifted in a way the speed probes did not follow, and these figures say little.**` : ''}`,
    'Latencies are of the 200 answers, in ms; "not 200" counts 503s, errors and requests the client could not send in time (over 3,000 in flight). Every server in a round gets the same tasks in the same order (`bench/k6/mix.js`, seeded with the round). CPU: shares of the machine\'s CPU time in the steady middle of the run, busy in all and the server\'s own; and, for a server of one process, the CPU time of its main thread, of its pool\'s threads and of its other threads (V8\'s GC and compiler, libuv) a request at the reference speed, as the scheduler counts each thread\'s time (`/proc/<pid>/task/<tid>/schedstat`). Client: the CPU time the client process spent a request it sent, as it ran, taken from the same cores. Work offered: the compute of the requests the client sent, at the limit\'s compute for each num, over the window and the threads: what the load was meant to offer, and, as the rate follows a speed, what a window did offer.',
    '',
    `![p99 against offered load](${mixName === 'default' ? 'open-loop' : `open-loop-${mixName}`}.svg)`,
    ''
  ]
  for (const load of loads) {
    lines.push(`## ${Math.round(load * 100)}% of C (${f(load * capacity.loadRps, 0)} req/s at the reference speed)`, '',
      `| server | goodput/s | not 200 | p99 | ${mix.map(([num]) => `fib(${num}) p99`).join(' | ')} | 503s | 503 p99 | CPU busy, server | µs a request: main thread, pool, others | client µs a request | speed | work offered |`,
      `|---|---|---|---|${mix.map(() => '---|').join('')}---|---|---|---|---|---|---|`)
    for (const name of servers) {
      const r = results[load][name]
      lines.push(`| ${name} | ${m(r.goodput, 0)} | ${r.notOkShare ? pct(r.notOkShare[0]) : '-'} | ${ms(r.p99)} | ${mix.map(([num]) => ms(r.classes[num].p99)).join(' | ')} | ${m(r.refused.count, 0)} | ${m(r.refused.p99)} | ${pct0(r.cpu.busy?.[0])}, ${pct0(r.cpu.server?.[0])} | ${r.cpu.mainUs ? `${ms(r.cpu.mainUs)}, ${ms(r.cpu.poolUs)}, ${ms(r.cpu.helpersUs)}` : '-'} | ${ms(r.clientUs)} | ${ms(r.speed, 2)} | ${ms(r.offered, 2)} |`)
    }
    lines.push('')
  }
  lines.push('## Goals', '', `Against the best peer of each load (${peers.join(', ')}), ratios of medians; beside them, the same ratio round by round against that peer's own round, as median (lowest-highest), since a 20 s p99 swings 2x for the same code.`, '', '| goal | measured | round by round | met |', '|---|---|---|---|')
  const goal = (text, value, met, rounds = '') => lines.push(`| ${text} | ${value} | ${rounds} | ${met ? 'yes' : '**no**'} |`)
  // The peer with the lowest median, and that median.
  const best = (load, read) => peers.map((name) => [name, read(results[load][name])?.[0] ?? Infinity]).reduce((a, b) => (b[1] < a[1] ? b : a))
  const byRound = (load, peer, read) => {
    const theirs = read(results[load][peer].byRound)
    const r = spread(read(results[load][SERVICE].byRound).map((mine, i) => ratio(mine, theirs[i])))
    return r === undefined ? '-' : `${f(r[0], 2)}x (${f(r[1], 2)}-${f(r[2], 2)})`
  }
  for (const load of GOAL_LOADS.filter((l) => results[l]?.[SERVICE])) {
    const at = `${load * 100}%`
    const service = results[load][SERVICE]
    const [allPeer, allBest] = best(load, (r) => r.p99)
    const all = ratio(service.p99?.[0], allBest)
    goal(`${at}: p99 <= ${overallGoal(load)}x the best peer's`, `${f(all, 2)}x (${m(service.p99)} vs ${f(allBest)} ms)`, all <= overallGoal(load), byRound(load, allPeer, (r) => r.p99))
    const [smallPeer, smallBest] = best(load, (r) => r.classes[small].p99)
    const smallP99 = ratio(service.classes[small].p99?.[0], smallBest)
    goal(`${at}: fib(${small}) p99 <= ${SMALL_GOAL}x the best peer's`, `${f(smallP99, 2)}x`, smallP99 <= SMALL_GOAL, byRound(load, smallPeer, (r) => r.classes[small]))
    const fifo = results[load][FIFO_POOL]
    const bigP99 = ratio(service.classes[big].p99?.[0], fifo?.classes[big].p99?.[0])
    goal(`${at}: fib(${big}) p99 <= ${BIG_GOAL}x the FIFO pool's`, `${f(bigP99, 2)}x`, bigP99 <= BIG_GOAL, fifo ? byRound(load, FIFO_POOL, (r) => r.classes[big]) : '-')
    goal(`${at}: at most ${pct(notOkGoal(load))} not answered 200`, pct(service.notOkShare[0]), service.notOkShare[0] <= notOkGoal(load))
  }
  const over = results[OVERLOAD]?.[SERVICE]
  if (over) {
    goal(`${OVERLOAD * 100}%: every refusal a fast 503 with Retry-After`,
      `${m(over.refused.count, 0)} refusals a round, p99 ${m(over.refused.p99)} ms, ${over.refused.withoutRetryAfter} without Retry-After`,
      over.refused.withoutRetryAfter === 0 && !(over.refused.p99?.[0] > FAST_REFUSAL_MS))
    // POOL_MAX_WAIT_MS bounds waits as they run; latencies here are at the reference speed, each
    // the time it took times the machine's speed then: the bound there is that speed times it.
    const late = mix.filter(([num]) => over.classes[num].p99?.[0] > maxWaitMs * over.speed[0] + limit.classMs[num])
    goal(`${OVERLOAD * 100}%: each class's p99 under POOL_MAX_WAIT_MS (${maxWaitMs} ms) + its compute`, late.length === 0 ? 'every class' : `over: ${late.map(([num]) => `fib(${num})`).join(', ')}`, late.length === 0)
  }
  return `${lines.join('\n')}\n`
}

// bench/results.md: the closed loop's tables, memory and goals.
const CLUSTER = 'cluster prefork'
const BARE = 'bare Fastify (no work)'
const FLOOR = 'worker_threads pool'
const PISCINA = 'Fastify + Piscina'
const QUIET = 'service, LOG_LEVEL=error'
const ONE_PER_THREAD = 'service, 1 task per thread'
const TYPICAL = 'typical Fastify app'

export function closedMarkdown ({ machine, seconds, rounds, computeFloorMs, servers, workloads, results, idleHealth, overheadAtOneMs }) {
  const times = (a, b) => (a && b ? `${(a / b).toFixed(2)}x` : '-')
  const lines = [
    '# Benchmark results',
    '',
    `Measured by \`npm run bench\` on ${machine.date}: ${machine.cpu}, ${machine.cpus} CPUs for the process, Node ${machine.node};`,
    `wrk on the same machine and cores, ${rounds} round(s) of ${seconds} s per server and workload, medians.`,
    `The bare compute time of fib(${HEAVY}) here is ${f(computeFloorMs, 2)} ms (median of one measurement per round). Throughput counts 2xx answers only; ratios are against the cluster prefork, the worker_threads pool (the floor of the service's architecture) and bare Fastify of the same run; latencies include 503s where there are any.`,
    ''
  ]
  for (const workload of workloads) {
    const r = results[workload.id]
    lines.push(`## ${workload.label}`, '', '| server | 2xx/s | vs cluster | vs worker_threads pool | vs bare Fastify | p50 ms | p99 ms | 503s | socket errors |', '|---|---|---|---|---|---|---|---|---|')
    for (const { name } of servers) {
      const x = r[name]
      lines.push(`| ${name} | ${f(x.rps, 0)} | ${times(x.rps, r[CLUSTER].rps)} | ${times(x.rps, r[FLOOR].rps)} | ${times(x.rps, r[BARE].rps)} | ${f(x.p50, 2)} | ${f(x.p99, 2)} | ${x.shed} | ${x.errors} |`)
    }
    if (workload.probe) {
      lines.push('', `/health while the heavy load runs (one request every ${HEALTH_EVERY_MS} ms), and the same probe on the idle server:`, '',
        '| server | /health p50 ms | p99 ms | max ms | idle p50 ms | idle p99 ms |', '|---|---|---|---|---|---|')
      for (const { name } of servers) {
        const h = r[name].health
        const i = idleHealth[name]
        lines.push(`| ${name} | ${f(h?.p50, 2)} | ${f(h?.p99, 2)} | ${f(h?.max, 2)} | ${f(i?.p50, 2)} | ${f(i?.p99, 2)} |`)
      }
    }
    lines.push('')
  }
  lines.push('## Memory', '', '| server | RSS after warm-up, MiB | peak RSS under load, MiB (all processes) |', '|---|---|---|')
  for (const s of servers) lines.push(`| ${s.name} | ${f(s.idleRssBytes / 2 ** 20, 0)} | ${f(s.peakRssBytes / 2 ** 20, 0)} |`)

  // The goals (issue "Overhead to the floor"), each with the floor measured beside it.
  const plus = (ms) => `${ms < 0 ? '' : '+'}${f(ms, 2)} ms`
  lines.push('', '## Goals', '', '| goal | measured | the floor in the same run | met |', '|---|---|---|---|')
  const goal = (text, value, floor, met) => lines.push(`| ${text} | ${value} | ${floor} | ${met ? 'yes' : '**no**'} |`)
  const heavy = results['heavy-2N']
  const heavy2N = heavy.service.rps / heavy[CLUSTER].rps
  goal(`fib(${HEAVY}) at 2N: >= 0.95x the cluster prefork`, `${heavy2N.toFixed(2)}x; with POOL_TASKS_PER_THREAD=1 ${times(heavy[ONE_PER_THREAD].rps, heavy[CLUSTER].rps)}`,
    `worker_threads pool ${times(heavy[FLOOR].rps, heavy[CLUSTER].rps)}; Fastify + Piscina ${times(heavy[PISCINA].rps, heavy[CLUSTER].rps)}`, heavy2N >= 0.95)
  const trivial = results['trivial-64']
  const quiet = trivial[QUIET].rps / trivial[BARE].rps
  goal(`fib(${TRIVIAL}) at 64, LOG_LEVEL=error: >= 0.7x bare Fastify`, `${quiet.toFixed(2)}x`,
    `at info (as shipped) ${times(trivial.service.rps, trivial[BARE].rps)}; the typical Fastify app ${times(trivial[TYPICAL].rps, trivial[BARE].rps)}`, quiet >= 0.7)
  const healthP99 = heavy.service.health?.p99
  const healthLimit = Math.max(5, 1.5 * idleHealth.service.p99)
  goal(`/health p99 while every core computes <= max(5 ms, 1.5x idle p99) = ${f(healthLimit, 2)} ms`, `${f(healthP99, 2)} ms`,
    `bare Fastify ${f(heavy[BARE].health?.p99, 2)} ms; worker_threads pool ${f(heavy[FLOOR].health?.p99, 2)} ms; Fastify + Piscina ${f(heavy[PISCINA].health?.p99, 2)} ms`, healthP99 <= healthLimit)
  // Beyond each answer's own compute, so that the drift of a core's speed between runs cancels;
  // bare Fastify computes nothing, so its figure is the client's and HTTP's round trip alone.
  const c1 = overheadAtOneMs.service
  goal('concurrency 1: median latency <= compute + 0.3 ms (each answer\'s own computeMs, one client)', plus(c1),
    `worker_threads pool ${plus(overheadAtOneMs[FLOOR])}; Fastify + Piscina ${plus(overheadAtOneMs[PISCINA])}; cluster prefork ${plus(overheadAtOneMs[CLUSTER])}; bare Fastify's round trip ${plus(overheadAtOneMs[BARE])}`, c1 <= 0.3)
  lines.push('', '![throughput ratios](chart.svg)', '',
    'Closed-loop runs hide queueing; the open-loop run of a mixed workload (latency against offered load) is in [open-loop.md](open-loop.md).', '')
  return lines.join('\n')
}
