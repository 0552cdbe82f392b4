// Test helpers: an app built from a given environment, closed when the test ends.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { build as buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

// The stand-in task (fixtures/test-worker.js), every input the same size to the cost model: it
// predicts the recent mean, so sizes never decide admission or order unless a test says so.
export const TEST_TASK = {
  file: fileURLToPath(new URL('./fixtures/test-worker.js', import.meta.url)),
  work: () => 1,
  calibration: { num: 0 }
}
// The stand-in task with its real size: num x 10 ms, so a cost model learns 10 ms per unit.
export const SIZED_TEST_TASK = { ...TEST_TASK, work: ({ num }) => num, calibration: { num: 3 } }

// Worker threads inherit the test runner's loaders, about 0.7 s each time a pool starts; the
// pools built here start their threads without them. The task's coverage comes from the tests
// that run it on the main thread.
export const BARE = []

// Builds the app from `env`; the log lines it writes are collected in `logs` (parsed JSON).
// With a stand-in task, no num is computed inline unless the test says so.
export async function build (t, env = {}, { task, level = 'info', cancelGraceMs } = {}) {
  if (task !== undefined) env = { FIB_INLINE_MAX_NUM: '0', ...env }
  const logs = []
  const stream = new Writable({
    write (chunk, encoding, callback) {
      logs.push(JSON.parse(chunk))
      callback()
    }
  })
  const app = await buildApp(loadConfig(env), { logger: { level, stream }, task, execArgv: BARE, cancelGraceMs })
  t.teardown(() => app.close())
  return { app, logs }
}

// A Piscina of two stand-in threads whose balancer records what it is offered (`offers`: the
// views of the ready threads, one list a run()) and picks an idle thread; resolves once both
// threads are up and offered.
export async function twoThreadPiscina (t) {
  const offers = []
  const piscina = new Piscina({
    filename: TEST_TASK.file,
    minThreads: 2,
    maxThreads: 2,
    execArgv: BARE,
    loadBalancer: (task, workers) => {
      offers.push(workers)
      return workers.find((worker) => worker.currentUsage === 0) ?? null
    }
  })
  t.teardown(() => piscina.close())
  for (let i = 0; i < 100 && offers.at(-1)?.length !== 2; i++) await piscina.run({ num: 0 })
  return { piscina, offers }
}

// Resolves once `predicate()` (sync or async) holds, polling every 5 ms; fails after `ms`.
export async function until (predicate, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

// A fake /sys/fs/cgroup and /proc/self/cgroup: `files` maps paths under the root to contents.
export function fakeTree (t, procSelfCgroup, files) {
  const dir = mkdtempSync(join(tmpdir(), 'cgroup-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'root', path)), { recursive: true })
    writeFileSync(join(dir, 'root', path), `${content}\n`)
  }
  writeFileSync(join(dir, 'cgroup'), procSelfCgroup)
  return { root: join(dir, 'root'), procSelfCgroup: join(dir, 'cgroup') }
}

// A TCP port free on loopback at the time of asking.
export async function freePort () {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

// The value of one sample in the exposition, e.g. value(text, 'x_total', 'reason="deadline"').
export function value (text, name, labels = '') {
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}}` : `${name} `))
  return line === undefined ? undefined : Number(line.split(' ').pop())
}
