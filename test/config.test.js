import { getHeapStatistics } from 'node:v8'
import { test } from 'tap'
import { ConfigError, DEFAULT_QUEUE_PER_THREAD, loadConfig } from '../src/config.js'
import { availableCpus } from '../src/cpus.js'

test('with no settings, every default applies', async (t) => {
  const { cpus, source } = availableCpus()
  const config = loadConfig({}, { cpus, source }, null)
  t.same(config, {
    port: 3000,
    host: '0.0.0.0',
    metricsPort: undefined,
    logLevel: 'info',
    logRequests: 'failed',
    poolThreads: cpus,
    poolThreadsSource: source,
    availableCpus: cpus,
    poolMaxQueue: cpus * DEFAULT_QUEUE_PER_THREAD,
    poolMaxWaitMs: 1000,
    poolDeadlineFactor: 4,
    poolTasksPerThread: 2,
    poolExpressMaxMs: 3,
    poolThreadNice: 0,
    fibMaxNum: 45,
    fibInlineMaxNum: 18,
    requestTimeoutMs: 30000,
    shutdownGraceMs: 35000,
    http: { headersTimeoutMs: 10000, receiveTimeoutMs: 20000, keepAliveTimeoutMs: 72000, maxConnections: 10000 },
    pressure: {
      maxEventLoopDelayMs: 250,
      maxEventLoopUtilization: 0,
      maxHeapUsedBytes: Math.floor(getHeapStatistics().heap_size_limit * 0.9),
      maxRssBytes: 0,
      maxRssBytesSource: 'off'
    }
  })
  t.ok(Object.isFrozen(config))
})

test('settings are read from the environment given', async (t) => {
  const config = loadConfig({
    PORT: '8080',
    HOST: '127.0.0.1',
    METRICS_PORT: '9464',
    LOG_LEVEL: 'debug',
    LOG_REQUESTS: 'all',
    POOL_THREADS: '3',
    POOL_MAX_QUEUE: '0',
    POOL_MAX_WAIT_MS: '250',
    POOL_DEADLINE_FACTOR: '0',
    POOL_TASKS_PER_THREAD: '1',
    POOL_EXPRESS_MAX_MS: '2',
    POOL_THREAD_NICE: '12',
    FIB_MAX_NUM: '78',
    REQUEST_TIMEOUT_MS: '1000',
    SHUTDOWN_GRACE_MS: '500',
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '100',
    PRESSURE_MAX_ELU: '0.9',
    PRESSURE_MAX_HEAP_BYTES: '1000000000',
    PRESSURE_MAX_RSS_BYTES: '2000000000',
    UNRELATED: 'ignored'
  })
  t.match(config, {
    port: 8080,
    host: '127.0.0.1',
    metricsPort: 9464,
    logLevel: 'debug',
    logRequests: 'all',
    poolThreads: 3,
    poolThreadsSource: 'POOL_THREADS',
    poolMaxQueue: 0,
    poolMaxWaitMs: 250,
    poolDeadlineFactor: 0,
    poolTasksPerThread: 1,
    poolExpressMaxMs: 2,
    poolThreadNice: 12,
    fibMaxNum: 78,
    requestTimeoutMs: 1000,
    shutdownGraceMs: 500,
    pressure: { maxEventLoopDelayMs: 100, maxEventLoopUtilization: 0.9, maxHeapUsedBytes: 1e9, maxRssBytes: 2e9 }
  })
  t.notOk('UNRELATED' in config)
})

test('the RSS bound defaults to 90% of the cgroup\'s memory limit; PRESSURE_MAX_RSS_BYTES overrides it, 0 turns it off', async (t) => {
  const cpus = { cpus: 2, source: 'availableParallelism' }
  const limit = { bytes: 512 * 2 ** 20, source: 'cgroup v2 memory.max' }
  t.match(loadConfig({}, cpus, limit).pressure, { maxRssBytes: Math.floor(0.9 * 512 * 2 ** 20), maxRssBytesSource: '90% of cgroup v2 memory.max' })
  t.match(loadConfig({ PRESSURE_MAX_RSS_BYTES: '1000' }, cpus, limit).pressure, { maxRssBytes: 1000, maxRssBytesSource: 'PRESSURE_MAX_RSS_BYTES' })
  t.match(loadConfig({ PRESSURE_MAX_RSS_BYTES: '0' }, cpus, limit).pressure, { maxRssBytes: 0, maxRssBytesSource: 'PRESSURE_MAX_RSS_BYTES' })
  t.match(loadConfig({}, cpus, null).pressure, { maxRssBytes: 0, maxRssBytesSource: 'off' })
})

test('the pool defaults to the CPUs the process may use, and says where that came from', async (t) => {
  const config = loadConfig({}, { cpus: 3, source: 'cgroup v2 cpu.max' })
  t.match(config, { poolThreads: 3, poolThreadsSource: 'cgroup v2 cpu.max', availableCpus: 3, poolMaxQueue: 3 * DEFAULT_QUEUE_PER_THREAD })
  t.match(loadConfig({ POOL_THREADS: '5' }, { cpus: 3, source: 'cgroup v2 cpu.max' }), { poolThreads: 5, poolThreadsSource: 'POOL_THREADS', availableCpus: 3 })
})

test('the default queue and grace follow the threads and the timeout', async (t) => {
  const config = loadConfig({ POOL_THREADS: '5', REQUEST_TIMEOUT_MS: '1000' })
  t.equal(config.poolMaxQueue, 5 * DEFAULT_QUEUE_PER_THREAD)
  t.equal(config.shutdownGraceMs, 6000)
})

test('HTTP_HEADERS_TIMEOUT_MS may not exceed HTTP_RECEIVE_TIMEOUT_MS', async (t) => {
  t.throws(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_RECEIVE_TIMEOUT_MS: '4000' }), {
    name: 'ConfigError',
    message: 'HTTP_HEADERS_TIMEOUT_MS="5000" is invalid: expected at most HTTP_RECEIVE_TIMEOUT_MS (4000)'
  })
  t.match(loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '4000', HTTP_RECEIVE_TIMEOUT_MS: '4000' }).http, { headersTimeoutMs: 4000, receiveTimeoutMs: 4000 })
})

test('METRICS_PORT must differ from PORT', async (t) => {
  t.throws(() => loadConfig({ PORT: '3000', METRICS_PORT: '3000' }), new ConfigError('METRICS_PORT="3000" is invalid: expected a port other than PORT (3000)'))
  t.throws(() => loadConfig({ METRICS_PORT: '3000' }), ConfigError, 'PORT defaults to 3000')
})

test('an empty variable counts as unset', async (t) => {
  t.equal(loadConfig({ PORT: '', POOL_THREADS: '' }).port, 3000)
})

test('a bad value is refused with a message naming the setting and what it accepts', async (t) => {
  const cases = {
    POOL_THREADS: [['abc', 'a whole number from 1 to 1024'], ['0', 'a whole number from 1 to 1024'], ['1e3', 'a whole number']],
    PORT: [['notaport', 'a whole number from 0 to 65535'], ['65536', 'a whole number from 0 to 65535'], [' 80', 'a whole number']],
    FIB_MAX_NUM: [['100', 'a whole number from 0 to 78'], ['0x10', 'a whole number']],
    FIB_INLINE_MAX_NUM: [['31', 'a whole number from 0 to 30']],
    LOG_LEVEL: [['loud', 'one of fatal, error, warn, info, debug, trace, silent']],
    LOG_REQUESTS: [['none', 'one of failed, all'], ['ALL', 'one of failed, all']],
    REQUEST_TIMEOUT_MS: [['0', 'a whole number from 1 to'], ['1.5', 'a whole number']],
    POOL_MAX_QUEUE: [['-1', 'a whole number from 0 to']],
    METRICS_PORT: [['0', 'a whole number from 1 to 65535'], ['70000', 'a whole number from 1 to 65535']],
    POOL_THREAD_NICE: [['20', 'a whole number from 0 to 19'], ['-5', 'a whole number from 0 to 19']],
    POOL_TASKS_PER_THREAD: [['3', 'a whole number from 1 to 2'], ['0', 'a whole number from 1 to 2']],
    POOL_EXPRESS_MAX_MS: [['1001', 'a whole number from 0 to 1000'], ['-1', 'a whole number from 0 to 1000'], ['2.5', 'a whole number']],
    SHUTDOWN_GRACE_MS: [['soon', 'a whole number from 0 to']],
    PRESSURE_MAX_ELU: [['1.5', 'a number from 0 to 1'], ['.5', 'a number from 0 to 1'], ['1e-1', 'a number from 0 to 1']],
    PRESSURE_MAX_HEAP_BYTES: [['1GB', 'a whole number from 0 to']]
  }
  for (const [name, values] of Object.entries(cases)) {
    for (const [value, accepted] of values) {
      t.throws(() => loadConfig({ [name]: value }), {
        name: 'ConfigError',
        message: `${name}=${JSON.stringify(value)} is invalid: expected ${accepted}`
      }, `${name}=${value}`)
    }
  }
  t.throws(() => loadConfig({ PORT: 'x' }), ConfigError)
})

test('PRESSURE_MAX_ELU takes any decimal from 0 to 1, with as many places as given', async (t) => {
  for (const [given, expected] of [['0.95', 0.95], ['0.125', 0.125], ['1', 1], ['0', 0]]) {
    t.equal(loadConfig({ PRESSURE_MAX_ELU: given }).pressure.maxEventLoopUtilization, expected, given)
  }
})

test('loadConfig reads only the environment it is given: not process.env, not a .env file', async (t) => {
  const dir = t.testdir({ '.env': 'PORT=4321\nLOG_LEVEL=debug\n' })
  t.chdir(dir)
  const before = process.env.PORT
  process.env.PORT = '1234'
  t.teardown(() => {
    if (before === undefined) delete process.env.PORT
    else process.env.PORT = before
  })
  t.match(loadConfig({}), { port: 3000, logLevel: 'info' })
  t.match(loadConfig(), { port: 1234 }, 'without an argument, process.env')
})
