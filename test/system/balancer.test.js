// HAProxy with deploy/haproxy/haproxy.cfg, as shipped, in front of two replicas under steady load
// that one replica alone carries: one replica is killed while it holds tasks and restarted, then
// the other restarted the way an orchestrator does (SIGTERM, then a new one). Every GET is answered
// 200; without the file's retry policy, the killed replica's requests are lost.
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import { freePort, until, value } from '../helper.js'

const SERVER = fileURLToPath(new URL('../../src/server.js', import.meta.url))
const CONFIG = fileURLToPath(new URL('../../deploy/haproxy/haproxy.cfg', import.meta.url))
// A request every 20 ms, three fib(25) (under a millisecond) to a fib(32) (about 20 ms): a
// quarter of one replica's thread, which it carries alone even on a machine shared with other
// tests, and long tasks to be killed in. Bounded in time and count.
const EVERY_MS = 20
const MAX_REQUESTS = 3000
const NUMS = [25, 25, 25, 32]
// The health check's fall and rise: two checks a second apart, and a margin. A killed replica stays
// down this long, as a crashed one does while its orchestrator restarts it, so that HAProxy takes
// it out of rotation before it comes back.
const BACK_IN_ROTATION_MS = 3000

const get = (agent, port, path) => new Promise((resolve) => {
  http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
    res.resume()
    res.on('end', () => resolve(res.statusCode))
  }).on('error', (err) => resolve(err.code))
})

// A replica: src/server.js with one thread on `port`, resolved once it answers /health.
async function replica (t, port) {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), POOL_THREADS: '1', LOG_LEVEL: 'warn' },
    stdio: 'ignore'
  })
  t.teardown(() => child.kill('SIGKILL'))
  await until(async () => (await get(undefined, port, '/health')) === 200)
  return child
}

// HAProxy with `config`, its addresses from the environment as the file expects. `up(server)`
// resolves once HAProxy has put that server (api1, api2) back in rotation after it was out:
// HAProxy says so on stderr.
async function haproxy (t, config, { port, api1, api2 }) {
  const child = spawn('haproxy', ['-f', config], {
    env: { ...process.env, HAPROXY_BIND: `127.0.0.1:${port}`, API1: `127.0.0.1:${api1}`, API2: `127.0.0.1:${api2}` },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  t.teardown(() => child.kill('SIGKILL'))
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const ups = (server) => stderr.split(`Server replicas/${server} is UP`).length - 1
  await until(async () => (await get(undefined, port, '/ready')) === 200)
  // Both servers start in rotation; their first checks pass.
  await sleep(BACK_IN_ROTATION_MS)
  return {
    stderr: () => stderr,
    // Call before the server goes down; the function it returns resolves once it is back.
    upAgain (server) {
      const seen = ups(server)
      return () => until(() => ups(server) > seen, 20_000).catch((err) => {
        throw new Error(`${err.message}: ${server} not back in HAProxy's rotation; it said: ${stderr.trim().split('\n').slice(-4).join(' | ')}`)
      })
    }
  }
}

// Steady load through `port` until `done` settles: every status seen, by count.
async function load (port, done) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 })
  const statuses = {}
  const requests = []
  const state = { finished: false }
  done.then(() => { state.finished = true })
  for (let i = 0; !state.finished && i < MAX_REQUESTS; i++) {
    requests.push(get(agent, port, `/fib?num=${NUMS[i % NUMS.length]}`).then((status) => {
      statuses[status] = (statuses[status] ?? 0) + 1
    }))
    await sleep(EVERY_MS)
  }
  await Promise.all(requests)
  agent.destroy()
  return statuses
}

// Kills replica 1 with SIGKILL while it computes (seen on its own /metrics), restarts it, then,
// once HAProxy has it back in rotation (as an orchestrator waits for readiness), replaces
// replica 2 with SIGTERM and a new process. Returns what it saw.
async function crashAndRoll (t, replicas, ports, proxy) {
  const busy = async () => value(await fetch(`http://127.0.0.1:${ports.api1}/metrics`).then((r) => r.text()), 'fib_pool_busy_threads') === 1
  await sleep(1000)
  await until(busy)
  const api1Back = proxy.upAgain('api1')
  replicas[0].kill('SIGKILL')
  await once(replicas[0], 'exit')
  await sleep(BACK_IN_ROTATION_MS)
  replicas[0] = await replica(t, ports.api1)
  await api1Back()
  replicas[1].kill('SIGTERM')
  const [code] = await once(replicas[1], 'exit')
  replicas[1] = await replica(t, ports.api2)
  await sleep(BACK_IN_ROTATION_MS)
  return { drainedExit: code }
}

async function scenario (t, config) {
  const ports = { port: await freePort(), api1: await freePort(), api2: await freePort() }
  const replicas = [await replica(t, ports.api1), await replica(t, ports.api2)]
  const proxy = await haproxy(t, config, ports)
  const events = crashAndRoll(t, replicas, ports, proxy)
  const statuses = await load(ports.port, events)
  return { statuses, ...(await events), stderr: proxy.stderr() }
}

const haproxyInstalled = !spawnSync('haproxy', ['-v']).error

test('through HAProxy, every GET is answered 200 across a replica killed mid-task and a rolling restart', { skip: !haproxyInstalled && 'haproxy is not installed (Debian: apt-get install haproxy; .ci/run does)' }, async (t) => {
  const { statuses, drainedExit, stderr } = await scenario(t, CONFIG)
  const total = Object.values(statuses).reduce((a, b) => a + b, 0)
  t.ok(total > 300, `${total} requests sent`)
  t.same(statuses, { 200: total }, `every request 200 (${stderr.trim().split('\n').slice(-3).join(' | ')})`)
  t.equal(drainedExit, 0, 'the replica given SIGTERM drained and exited 0')
})

test('without the retry policy, requests are lost: the killed replica\'s, and those the draining one refuses', { skip: !haproxyInstalled && 'haproxy is not installed' }, async (t) => {
  // A fixture of tap's, removed after the test.
  const bare = join(t.testdir({ 'haproxy.cfg': readFileSync(CONFIG, 'utf8').replace(/^\s*(retries|option redispatch|retry-on)\b.*$/gm, '') }), 'haproxy.cfg')
  const { statuses } = await scenario(t, bare)
  const lost = Object.entries(statuses).filter(([status]) => status !== '200').reduce((sum, [, n]) => sum + n, 0)
  t.ok(lost > 0, `not 200: ${JSON.stringify(statuses)}`)
})
