// The benchmark's reports: bench/results.md (closed loop) and bench/open-loop.md (open loop),
// their tables, the goals and, for the open loop, the model's reference.
import { HEALTH_EVERY_MS, HEAVY, TRIVIAL } from './closed.js'

const f = (x, d = 1) => (x === undefined || x === null ? '-' : x.toFixed(d))
const pct = (x) => `${(x * 100).toFixed(2)}%`
// A share as a whole percentage, '-' when not measured.
export const pct0 = (x) => (x === undefined ? '-' : `${(x * 100).toFixed(0)}%`)
const ratio = (a, b) => (a > 0 && b > 0 ? a / b : undefined)

// Goals of the cost-aware queue against the cluster prefork, at shares of the compute limit.
const GOALS = [
  { load: 0.7, p99: 0.6, small: 0.35, notOk: 0.005 },
  { load: 0.8, p99: 0.75, small: 0.4, notOk: 0.01 }
]
const OVERLOAD = { load: 1.2, goodput: 0.9 }

export function openMarkdown ({ machine, limit, loads, seconds, rounds, mix, results, model }) {
  const servers = Object.keys(results[loads[0]])
  const small = mix[0][0]
  const lines = [
    '# Open-loop benchmark: the mixed workload at a fixed arrival rate',
    '',
    `Measured by \`npm run bench\` on ${machine.date}: ${machine.cpu}, ${machine.cpus} CPUs for the process, Node ${machine.node}.`,
    `k6 \`constant-arrival-rate\` on the same machine and cores, ${seconds} s per server and load, ${rounds} round(s) (the run with the median p99 kept).`,
    `Mix: ${mix.map(([num, share]) => `${share * 100}% fib(${num})`).join(', ')}. Compute limit measured in the same run (every core computing the mix back to back, no HTTP; the threads over the mix's mean cost, where the tasks counted in the draw came to ${f(limit.drawnRps, 0)}/s):`,
    `**${f(limit.rps, 0)} tasks/s**; compute times ${mix.map(([num]) => `fib(${num}) ${f(limit.classMs[num], 2)} ms`).join(', ')}.`,
    'Latencies are of the 200 answers, in ms; "not 200" counts 503s, errors and requests k6 could not send in time; goodput is 200s per second of arrivals.',
    'Every server in a round gets the same tasks in the same order (`bench/k6/mix.js`, seeded with the round). CPU: shares of the machine\'s CPU time in the steady middle of the run: busy in all (the server, k6 and anything else), the server\'s own (all its threads and processes), and stolen by the hypervisor.',
    '',
    '![p99 against offered load](open-loop.svg)',
    ''
  ]
  for (const load of loads) {
    lines.push(`## ${Math.round(load * 100)}% of the compute limit (${f(load * limit.rps, 0)} req/s offered)`, '',
      `| server | goodput/s | not 200 | p50 | p99 | p99.9 | fib(${small}) p50 | fib(${small}) p99 | ${mix.slice(1).map(([num]) => `fib(${num}) p99`).join(' | ')} | 503 p99 | CPU busy, server, stolen |`,
      `|---|---|---|---|---|---|---|---|${mix.slice(1).map(() => '---|').join('')}---|---|`)
    for (const name of servers) {
      const r = results[load][name]
      const c = r.classes
      lines.push(`| ${name} | ${f(r.goodput, 0)} | ${pct(r.notOkShare)} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.p999)} | ${f(c[small].p50)} | ${f(c[small].p99)} | ${mix.slice(1).map(([num]) => f(c[num].p99)).join(' | ')} | ${f(r.refused?.p99)} | ${r.cpu ? [r.cpu.busy, r.cpu.server, r.cpu.steal].map(pct0).join(', ') : '-'} |`)
    }
    lines.push('')
  }
  lines.push('## Against the model', '',
    'A queueing model (`bench/sim.js`: tasks drawn as k6 draws them, evenly spaced as k6 spaces them, the compute times above, no hand-off cost) gives the p99 each policy can reach at these loads:', '',
    '| load | per-process queues (cluster) | one shared queue, first come first served | one queue, cheapest first | cheapest first, fib(' + small + ') |', '|---|---|---|---|---|')
  for (const [load, m] of Object.entries(model)) {
    lines.push(`| ${Math.round(load * 100)}% | ${f(m['per-process'].p99)} | ${f(m.shared.p99)} (${f(ratio(m.shared.p99, m['per-process'].p99), 2)}x) | ${f(m.cheapest.p99)} (${f(ratio(m.cheapest.p99, m['per-process'].p99), 2)}x) | ${f(m.cheapest.smallP99)} (${f(ratio(m.cheapest.smallP99, m['per-process'].smallP99), 2)}x) |`)
  }
  lines.push('', '## Goals', '', '| goal | measured | met |', '|---|---|---|')
  const goal = (text, value, met) => lines.push(`| ${text} | ${value} | ${met ? 'yes' : '**no**'} |`)
  for (const g of GOALS) {
    const service = results[g.load]?.service
    const cluster = results[g.load]?.['cluster prefork']
    if (!service || !cluster) continue
    const p99 = ratio(service.p99, cluster.p99)
    const smallP99 = ratio(service.classes[small].p99, cluster.classes[small].p99)
    goal(`${g.load * 100}%: p99 <= ${g.p99}x the cluster's`, `${f(p99, 2)}x (${f(service.p99)} vs ${f(cluster.p99)} ms)`, p99 <= g.p99)
    goal(`${g.load * 100}%: fib(${small}) p99 <= ${g.small}x`, `${f(smallP99, 2)}x (${f(service.classes[small].p99)} vs ${f(cluster.classes[small].p99)} ms)`, smallP99 <= g.small)
    goal(`${g.load * 100}%: at most ${pct(g.notOk)} not answered 200`, pct(service.notOkShare), service.notOkShare <= g.notOk)
  }
  const service = results[OVERLOAD.load]?.service
  const cluster = results[OVERLOAD.load]?.['cluster prefork']
  if (service && cluster) {
    const goodput = ratio(service.goodput, cluster.goodput)
    goal(`${OVERLOAD.load * 100}%: goodput >= ${OVERLOAD.goodput}x the cluster's`, `${f(goodput, 2)}x (${f(service.goodput, 0)} vs ${f(cluster.goodput, 0)}/s)`, goodput >= OVERLOAD.goodput)
    const refused = service.refused
    goal(`${OVERLOAD.load * 100}%: every refusal a fast 503 with Retry-After`,
      `${refused.count} refusals, p99 ${f(refused.p99)} ms, ${refused.withoutRetryAfter} without Retry-After`, refused.withoutRetryAfter === 0 && !(refused.p99 > 100))
  }
  return `${lines.join('\n')}\n`
}

// bench/results.md: the closed loop's tables, memory and goals.
const CLUSTER = 'cluster prefork'
const BARE = 'bare Fastify (no work)'
const FLOOR = 'worker_threads pool'
const PISCINA = 'Fastify + Piscina'
const QUIET = 'service, LOG_LEVEL=error'
const TWO_PER_THREAD = 'service, 2 tasks per thread'
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
  goal(`fib(${HEAVY}) at 2N: >= 0.95x the cluster prefork`, `${heavy2N.toFixed(2)}x; with POOL_TASKS_PER_THREAD=2 ${times(heavy[TWO_PER_THREAD].rps, heavy[CLUSTER].rps)}`,
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
