// node bench/features.js: what each of the service's per-request features costs the main thread on
// the trivial path (GET /fib?num=10, computed inline as the service does up to FIB_INLINE_MAX_NUM),
// in microseconds of main-thread time per request. A ladder of apps starts at bare Fastify and adds the
// service's features one at a time, with the service's own code and settings (src/config.js);
// above it, the service itself (src/app.js) at LOG_LEVEL=error, as shipped (info, a line only for a
// failed request) and at LOG_REQUESTS=all (a line for every request). What src/app.js adds
// beyond the ladder (the OpenAPI document and UI, /health, /ready) has no per-request hook; the
// listener's timeouts and connection limit are Node's HTTP, not measured here.
//
// All in this process, through Fastify's inject: no sockets, so what is measured is Fastify and
// the features, not Node's HTTP parser and sockets, the same on every step. Requests go one at a
// time, the apps in a rotating order round after round, each round a few milliseconds. What a round takes is timed (this thread's CPU time counts in
// 4 ms ticks here), and it is never less than the work: a round that the machine interrupts (other
// processes, the hypervisor) only takes longer. So each app's cost is a low quantile (the 10th
// percentile) of its rounds, the least disturbed; under wrk, one server's CPU per request ranged
// from 17 to 46 us over six 1 s runs here, more than most features cost.
//
//   node bench/features.js        # 300 rounds of 200 requests an app, about 40 s; writes bench/out/features.md
//   BENCH_ROUNDS=600 node bench/features.js
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setImmediate as turn } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import pino from 'pino'
import { build, echoRequestId, poolOptions, requestId } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import drain, { refuseWhileClosing } from '../src/drain.js'
import errors, { frameworkError } from '../src/errors.js'
import metrics from '../src/metrics.js'
import { dereference, readSpec, routeSchema } from '../src/openapi.js'
import pool from '../src/pool/index.js'
import pressure from '../src/pressure.js'
import { RequestLog } from '../src/request-log.js'
import fibRoute from '../src/routes/fib.js'
import fibTask from '../workers/fib.js'
import { TRIVIAL } from './closed.js'
import { median, percentile } from './stats.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const OUT = join(ROOT, 'bench/out')
const ROUNDS = Number(process.env.BENCH_ROUNDS || 300)
const REQUESTS = 200
const QUANTILE = 0.1
const WARM_UP = 5000
const URL_PATH = `/fib?num=${TRIVIAL}`

const config = loadConfig({ ...process.env, LOG_LEVEL: 'error' })
// Written as src/server.js writes, synchronously, but to nothing.
const logger = (level) => ({ level, stream: pino.destination({ dest: '/dev/null', sync: true }) })
const resolved = dereference(readSpec({ fibMaxNum: config.fibMaxNum }))
const routeOptions = { schema: routeSchema(resolved, 'GET', '/fib'), maxNum: config.fibMaxNum, inlineMaxNum: config.fibInlineMaxNum }
const plainRoute = async (scope) => scope.get('/fib', async (request) => {
  const num = Number(request.query.num)
  return { num, ...fibTask({ num }) }
})

// In the order they are added: `options` to Fastify's, `app` on the app, `scope` on the scope of
// the work routes, `route` in place of the plain /fib route.
const FEATURES = [
  { name: 'the logger (pino at error; a child logger per request)', options: { logger: logger('error') } },
  { name: 'request ids (a client\'s x-request-id checked, else a UUID)', options: { genReqId: requestId } },
  { name: 'the x-request-id header (an onRequest hook)', app: (app) => app.addHook('onRequest', echoRequestId) },
  { name: 'the request log (its log controller)', options: { logController: new RequestLog({ all: false }) } },
  { name: 'the error handlers', options: { frameworkErrors: frameworkError }, app: (app) => app.register(errors) },
  { name: 'the drain (an onSend hook)', options: { return503OnClosing: false }, app: (app) => app.register(drain) },
  { name: 'the shutdown refusal (an onRequest hook)', scope: (scope) => scope.addHook('onRequest', refuseWhileClosing) },
  { name: 'under-pressure (an onRequest hook)', scope: (scope) => scope.register(pressure, config.pressure) },
  // Until the metrics are added, the route counts into nothing.
  {
    name: 'the service\'s route: num parsed, the query validated, the answer serialised by schema',
    scope: (scope) => scope.hasDecorator('metrics') || scope.decorate('metrics', { inline: { inc () {} }, rejected: { inc () {} } }),
    route: (scope) => scope.register(fibRoute, routeOptions)
  },
  {
    name: 'the pool and the metrics (an onResponse hook, the inline counter)',
    app: (app) => app.register(pool, poolOptions(config)).register(metrics, { config })
  }
]

async function ladder (k) {
  const features = FEATURES.slice(0, k)
  const app = Fastify(Object.assign({ logger: false }, ...features.map((feature) => feature.options)))
  for (const feature of features) await feature.app?.(app)
  await app.register(async function work (scope) {
    for (const feature of features) await feature.scope?.(scope)
    await (features.findLast((feature) => feature.route)?.route ?? plainRoute)(scope)
  })
  return app
}

const apps = [
  ...await Promise.all([{ name: 'bare Fastify, fib computed in the handler' }, ...FEATURES].map(async ({ name }, k) => ({
    name: k === 0 ? name : `+ ${name}`,
    app: await ladder(k)
  }))),
  { name: 'the service (src/app.js), LOG_LEVEL=error', app: await build(config, { logger: logger('error') }) },
  { name: 'the service as shipped (info)', app: await build({ ...config, logLevel: 'info' }, { logger: logger('info') }) },
  { name: 'the service, LOG_REQUESTS=all', app: await build({ ...config, logLevel: 'info', logRequests: 'all' }, { logger: logger('info') }) }
].map((entry) => ({ ...entry, us: [] }))

// `count` requests one after the other; the time they took, in microseconds.
async function measure (app, count) {
  const started = process.hrtime.bigint()
  for (let i = 1; i <= count; i++) {
    const res = await app.inject({ method: 'GET', url: URL_PATH })
    if (res.statusCode !== 200) throw new Error(`GET ${URL_PATH} answered ${res.statusCode}: ${res.body}`)
    // Lets the event loop turn, as between a server's reads: what a response leaves to a later
    // turn (inject's clean-up among it) piles up otherwise.
    if (i % 100 === 0) await turn()
  }
  return Number(process.hrtime.bigint() - started) / 1000
}

for (const { app } of apps) await measure(app, WARM_UP)
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < apps.length; i++) {
    const entry = apps[(round + i) % apps.length]
    entry.us.push(await measure(entry.app, REQUESTS) / REQUESTS)
  }
}
await Promise.all(apps.map(({ app }) => app.close()))

const f = (x) => x.toFixed(1)
const cost = apps.map((entry) => percentile(entry.us.toSorted((a, b) => a - b), QUANTILE))
const lines = [
  `# The trivial path's features (${new Date().toISOString().slice(0, 10)}, GET ${URL_PATH} through inject, ${ROUNDS} rounds of ${REQUESTS} requests an app)`, '',
  `Main-thread time per request, in microseconds: the ${QUANTILE * 100}th percentile of each step's rounds, what it adds to the step it builds on, and the median of its rounds.`, '',
  '| step | us per request | added | median of the rounds |', '|---|---|---|---|',
  ...apps.map((entry, i) => `| ${entry.name} | ${f(cost[i])} | ${i === 0 ? '' : f(cost[i] - cost[i - 1])} | ${f(median(entry.us))} |`),
  ''
]
mkdirSync(OUT, { recursive: true })
writeFileSync(join(OUT, 'features.md'), lines.join('\n'))
console.log(`${lines.join('\n')}\nbench: wrote bench/out/${'features.md'}`)
