// The service's settings: one validated schema, read from the environment once, every default here.
import { getHeapStatistics } from 'node:v8'
import envSchema from 'env-schema'
import { availableCpus } from './cpus.js'
import { memoryLimit } from './memory.js'

// fib(78) is the last Fibonacci number a double holds exactly (below 2^53).
export const MAX_EXACT_FIB_NUM = 78
export const DEFAULT_FIB_MAX_NUM = 45
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
// A task cheaper than the hand-off to a thread runs on the main thread: up to fib(18) (~30 us)
// it costs the main thread less than the hand-off does, whatever the core count (docs/benchmarks.md).
// Capped so that no setting can block the main thread for long.
export const DEFAULT_FIB_INLINE_MAX_NUM = 18
const MAX_INLINE_NUM = 30
// The longest predicted wait for a thread at which a task is still admitted: in a flood a client
// hears 503 at once rather than seconds later (bench/open-loop.md).
export const DEFAULT_POOL_MAX_WAIT_MS = 1000
// A waiting task's allowance before cheaper work stops overtaking it, in multiples of its own
// predicted compute (capped by the wait, src/pool/index.js); 0 orders tasks as they come.
// 4 lets a fib(28) of 3 ms go ahead of every bigger task that came within 12 ms before it. On the
// tasks of two open-loop runs of the default mix, the overall p99 at 80% of C read 0.87x and 0.93x
// first come, first served's, against 0.96x and 1.03x with 6; fib(28)'s 0.55x and 0.53x against
// 0.49x and 0.48x (docs/design.md).
export const DEFAULT_POOL_DEADLINE_FACTOR = 4
// Tasks that may wait, per thread: a cap for memory only. The wait bound refuses work first
// unless tasks are under a millisecond each.
export const DEFAULT_QUEUE_PER_THREAD = 1000
// Two: a cheap task may wait on a busy thread about to free up and start there without a round trip
// through the main thread (fib(27) at concurrency 4: 0.942x the cluster's throughput against
// 0.867x with one, the median of three runs of bench/ladder.js, 2026-12-01, on the code of
// cfdbe8e; 0.91-0.95x against 0.84-0.88x in other runs). 1 keeps every waiting task in the
// service's queue, in deadline order, for the first thread to free up.
export const DEFAULT_TASKS_PER_THREAD = 2
// The most a task may be predicted to compute to run on the express thread, beside the busy
// threads, when none of them is predicted to free up within 5 ms nor within six times the task's
// compute; 0: no express thread. At 3 ms the smallest tasks' p99 at half of capacity was 0.43x
// the best peer's on the default mix and 0.34x on the big (2026-11-29); at high loads the thread
// steps aside (EXPRESS_MAX_SATURATION in src/pool/index.js), as the threads are busy too much of
// the time (docs/benchmarks.md).
export const DEFAULT_POOL_EXPRESS_MAX_MS = 3
// Off by default. Lower-priority workers let the main thread take a core at once (/health p99
// under full load 7 -> 3.5 ms at 19), but under a flood they starve behind the main thread and
// anything else on the machine: accepted requests waited 744 ms instead of 270 (docs/benchmarks.md).
export const DEFAULT_POOL_THREAD_NICE = 0
// Main-thread pressure past which work is shed. The main thread only does HTTP, so a mean
// event-loop delay of a quarter second means requests are already waiting.
export const DEFAULT_PRESSURE_MAX_EVENT_LOOP_DELAY_MS = 250
// Off by default: under a flood the main thread is busiest answering 503s, and shedding on its
// utilisation then turns away work idle threads could do. Measured with clients sharing the main
// thread (test/system/overload.test.js): 19% of thread time went to delivered answers with a 0.98 limit,
// 82% without. With k6 as a separate process on 2 cores both settings gave the same result.
export const DEFAULT_PRESSURE_MAX_ELU = 0
// Shed before the heap reaches V8's limit, where the process would crash instead.
const DEFAULT_HEAP_SHARE = 0.9
// Shed before resident memory reaches the cgroup's limit, where the kernel would kill the process
// instead: the rest is headroom for what grows between two samples (every 500 ms) and for memory
// the cgroup counts beside RSS (page cache, kernel buffers of open sockets). In a soak (the open
// loop's mix at 95% of what the machine carries, then a flood at 140%), RSS grew at most 7 MiB
// within 500 ms and peaked at 286 MiB: 10% of a 512 MiB limit is seven times that growth.
export const DEFAULT_RSS_SHARE = 0.9
// A client must send its whole request head within HTTP_HEADERS_TIMEOUT_MS and the whole request
// within HTTP_RECEIVE_TIMEOUT_MS, or gets 408 and its connection closed: a connection that sends
// half its headers, or nothing, is not held for ever (without a proxy in front, these are the
// service's defence against slow clients). Generous for any real client of a GET-only API.
export const DEFAULT_HTTP_HEADERS_TIMEOUT_MS = 10_000
export const DEFAULT_HTTP_RECEIVE_TIMEOUT_MS = 20_000
// Idle keep-alive connections close after this: longer than the idle timeout of the load
// balancers in front (AWS ALB 60 s by default), so the balancer, not the service, closes an idle
// connection, and never sends a request on one the service is closing. Fastify's own default.
export const DEFAULT_HTTP_KEEP_ALIVE_TIMEOUT_MS = 72_000
// Connections open at once; past it a new connection is closed as soon as it is accepted. Below
// the file-descriptor limit containers usually give (65536 or more), so the process never runs
// out of descriptors for its own files, threads and the metrics listener.
export const DEFAULT_HTTP_MAX_CONNECTIONS = 10_000
// The shutdown grace lets the longest legal request finish, plus this margin.
const SHUTDOWN_MARGIN_MS = 5_000
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
// Which requests get a line. Only the failed ones by default: at 80-90% of what the machine carries,
// a line for every answer cost the tails (docs/configuration.md, LOG_REQUESTS).
const LOG_REQUESTS = ['failed', 'all']

export const schema = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3000 },
    METRICS_PORT: { type: 'integer', minimum: 1, maximum: 65535 },
    HOST: { type: 'string', default: '0.0.0.0' },
    LOG_LEVEL: { type: 'string', enum: LOG_LEVELS, default: 'info' },
    LOG_REQUESTS: { type: 'string', enum: LOG_REQUESTS, default: 'failed' },
    POOL_THREADS: { type: 'integer', minimum: 1, maximum: 1024 },
    POOL_MAX_QUEUE: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    POOL_MAX_WAIT_MS: { type: 'integer', minimum: 1, maximum: 86_400_000, default: DEFAULT_POOL_MAX_WAIT_MS },
    POOL_DEADLINE_FACTOR: { type: 'integer', minimum: 0, maximum: 1000, default: DEFAULT_POOL_DEADLINE_FACTOR },
    POOL_TASKS_PER_THREAD: { type: 'integer', minimum: 1, maximum: 2, default: DEFAULT_TASKS_PER_THREAD },
    POOL_EXPRESS_MAX_MS: { type: 'integer', minimum: 0, maximum: 1000, default: DEFAULT_POOL_EXPRESS_MAX_MS },
    POOL_THREAD_NICE: { type: 'integer', minimum: 0, maximum: 19, default: DEFAULT_POOL_THREAD_NICE },
    FIB_MAX_NUM: { type: 'integer', minimum: 0, maximum: MAX_EXACT_FIB_NUM, default: DEFAULT_FIB_MAX_NUM },
    FIB_INLINE_MAX_NUM: { type: 'integer', minimum: 0, maximum: MAX_INLINE_NUM, default: DEFAULT_FIB_INLINE_MAX_NUM },
    REQUEST_TIMEOUT_MS: { type: 'integer', minimum: 1, maximum: 86_400_000, default: DEFAULT_REQUEST_TIMEOUT_MS },
    SHUTDOWN_GRACE_MS: { type: 'integer', minimum: 0, maximum: 86_400_000 },
    HTTP_HEADERS_TIMEOUT_MS: { type: 'integer', minimum: 1, maximum: 86_400_000, default: DEFAULT_HTTP_HEADERS_TIMEOUT_MS },
    HTTP_RECEIVE_TIMEOUT_MS: { type: 'integer', minimum: 1, maximum: 86_400_000, default: DEFAULT_HTTP_RECEIVE_TIMEOUT_MS },
    HTTP_KEEP_ALIVE_TIMEOUT_MS: { type: 'integer', minimum: 1, maximum: 86_400_000, default: DEFAULT_HTTP_KEEP_ALIVE_TIMEOUT_MS },
    HTTP_MAX_CONNECTIONS: { type: 'integer', minimum: 1, maximum: 1_000_000, default: DEFAULT_HTTP_MAX_CONNECTIONS },
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: { type: 'integer', minimum: 0, maximum: 86_400_000, default: DEFAULT_PRESSURE_MAX_EVENT_LOOP_DELAY_MS },
    PRESSURE_MAX_ELU: { type: 'number', minimum: 0, maximum: 1, default: DEFAULT_PRESSURE_MAX_ELU },
    PRESSURE_MAX_HEAP_BYTES: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    PRESSURE_MAX_RSS_BYTES: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }
  }
}

export class ConfigError extends Error {
  name = 'ConfigError'
}

// Only numbers and the two LOG_ enums can be invalid: any non-empty HOST is left to listen().
function accepted (rule) {
  if (rule.enum) return `one of ${rule.enum.join(', ')}`
  return `${rule.type === 'integer' ? 'a whole number' : 'a number'} from ${rule.minimum} to ${rule.maximum}`
}

// Plain decimals only, so that Ajv's coercion never sees "1e3", "0x10" or " 5".
const PLAIN = { integer: /^[0-9]+$/, number: /^[0-9]+(\.[0-9]+)?$/ }

function invalid (name, value) {
  return new ConfigError(`${name}=${JSON.stringify(value)} is invalid: expected ${accepted(schema.properties[name])}`)
}

// The RSS bound in effect, and where it came from: the setting, else a share of the cgroup's
// memory limit, else off (0).
function rssBound (setting, memory) {
  if (setting !== undefined) return { bytes: setting, source: 'PRESSURE_MAX_RSS_BYTES' }
  if (memory == null) return { bytes: 0, source: 'off' }
  return { bytes: Math.floor(memory.bytes * DEFAULT_RSS_SHARE), source: `${DEFAULT_RSS_SHARE * 100}% of ${memory.source}` }
}

// Reads the settings from `env` (process.env in production, a plain object in tests); `cpus` is
// what this process may use ({ cpus, source }, see cpus.js), `memory` its cgroup's memory limit
// ({ bytes, source }, see memory.js; null for none). An empty variable counts as unset.
export function loadConfig (env = process.env, cpus = availableCpus(), memory = memoryLimit()) {
  const given = {}
  for (const [name, rule] of Object.entries(schema.properties)) {
    const value = env[name]
    if (value === undefined || value === '') continue
    if (PLAIN[rule.type]?.test(value) === false) throw invalid(name, value)
    given[name] = value
  }
  let parsed
  try {
    parsed = envSchema({ schema, data: given, env: false, dotenv: false })
  } catch (err) {
    const name = err.errors[0].instancePath.slice(1)
    throw invalid(name, given[name])
  }
  if (parsed.METRICS_PORT === parsed.PORT) {
    throw new ConfigError(`METRICS_PORT=${JSON.stringify(given.METRICS_PORT)} is invalid: expected a port other than PORT (${parsed.PORT})`)
  }
  if (parsed.HTTP_HEADERS_TIMEOUT_MS > parsed.HTTP_RECEIVE_TIMEOUT_MS) {
    throw new ConfigError(`HTTP_HEADERS_TIMEOUT_MS=${JSON.stringify(String(parsed.HTTP_HEADERS_TIMEOUT_MS))} is invalid: expected at most HTTP_RECEIVE_TIMEOUT_MS (${parsed.HTTP_RECEIVE_TIMEOUT_MS})`)
  }
  const poolThreads = parsed.POOL_THREADS ?? cpus.cpus
  const rss = rssBound(parsed.PRESSURE_MAX_RSS_BYTES, memory)
  return Object.freeze({
    port: parsed.PORT,
    host: parsed.HOST,
    metricsPort: parsed.METRICS_PORT,
    logLevel: parsed.LOG_LEVEL,
    logRequests: parsed.LOG_REQUESTS,
    poolThreads,
    poolThreadsSource: parsed.POOL_THREADS === undefined ? cpus.source : 'POOL_THREADS',
    availableCpus: cpus.cpus,
    poolMaxQueue: parsed.POOL_MAX_QUEUE ?? poolThreads * DEFAULT_QUEUE_PER_THREAD,
    poolMaxWaitMs: parsed.POOL_MAX_WAIT_MS,
    poolDeadlineFactor: parsed.POOL_DEADLINE_FACTOR,
    poolTasksPerThread: parsed.POOL_TASKS_PER_THREAD,
    poolExpressMaxMs: parsed.POOL_EXPRESS_MAX_MS,
    poolThreadNice: parsed.POOL_THREAD_NICE,
    fibMaxNum: parsed.FIB_MAX_NUM,
    fibInlineMaxNum: parsed.FIB_INLINE_MAX_NUM,
    requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
    shutdownGraceMs: parsed.SHUTDOWN_GRACE_MS ?? parsed.REQUEST_TIMEOUT_MS + SHUTDOWN_MARGIN_MS,
    http: {
      headersTimeoutMs: parsed.HTTP_HEADERS_TIMEOUT_MS,
      receiveTimeoutMs: parsed.HTTP_RECEIVE_TIMEOUT_MS,
      keepAliveTimeoutMs: parsed.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: parsed.HTTP_MAX_CONNECTIONS
    },
    pressure: {
      maxEventLoopDelayMs: parsed.PRESSURE_MAX_EVENT_LOOP_DELAY_MS,
      maxEventLoopUtilization: parsed.PRESSURE_MAX_ELU,
      maxHeapUsedBytes: parsed.PRESSURE_MAX_HEAP_BYTES ?? Math.floor(getHeapStatistics().heap_size_limit * DEFAULT_HEAP_SHARE),
      maxRssBytes: rss.bytes,
      maxRssBytesSource: rss.source
    }
  })
}
