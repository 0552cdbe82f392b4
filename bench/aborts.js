// What client aborts cost the other tasks with POOL_TASKS_PER_THREAD=2, where a cheap task may
// wait on a busy thread. On 2 threads, 2 clients keep asking for fib(35) (about 70 ms), while
// 4 clients ask for fib(27) (about 2 ms) and half of those hang up 1 ms after sending: the
// abandoned tasks are the ones that waited behind a fib(35). Reports the fib(35) answers per
// second (the work aborts must not cost), the fib(27) answers and the pool's retried count.
//
//   node bench/aborts.js                               # the service in this checkout
//   node bench/aborts.js --server ../other/src/server.js --seconds 20
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { waitReady } from './proc.js'

const { values: args } = parseArgs({
  options: {
    server: { type: 'string', default: fileURLToPath(new URL('../src/server.js', import.meta.url)) },
    seconds: { type: 'string', default: '15' },
    port: { type: 'string', default: '4199' },
    'tasks-per-thread': { type: 'string', default: '2' }
  }
})
const SECONDS = Number(args.seconds)
const server = { name: 'service', port: Number(args.port) }
const url = (num) => `http://127.0.0.1:${server.port}/fib?num=${num}`

const child = spawn(process.execPath, [resolve(args.server)], {
  env: { ...process.env, HOST: '127.0.0.1', PORT: args.port, POOL_THREADS: '2', POOL_TASKS_PER_THREAD: args['tasks-per-thread'], LOG_LEVEL: 'warn' },
  stdio: 'ignore'
})
process.on('exit', () => child.kill('SIGKILL'))
await waitReady(server)

const counts = { long: 0, short: 0, abandoned: 0 }
const end = Date.now() + SECONDS * 1000
async function client (num, abandonEvery) {
  for (let i = 0; Date.now() < end; i++) {
    if (abandonEvery && i % abandonEvery === 0) {
      const gone = new AbortController()
      const pending = fetch(url(num), { signal: gone.signal }).catch(() => {})
      await sleep(1)
      gone.abort()
      await pending
      counts.abandoned++
      continue
    }
    const res = await fetch(url(num))
    await res.arrayBuffer()
    if (res.status === 200) counts[num === 35 ? 'long' : 'short']++
  }
}
await Promise.all([client(35), client(35), ...Array.from({ length: 4 }, () => client(27, 2))])
const metrics = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text()
const sample = (name) => metrics.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1]
console.log(JSON.stringify({
  server: args.server,
  tasksPerThread: Number(args['tasks-per-thread']),
  seconds: SECONDS,
  fib35PerSecond: Number((counts.long / SECONDS).toFixed(1)),
  fib27PerSecond: Number((counts.short / SECONDS).toFixed(1)),
  abandonedPerSecond: Number((counts.abandoned / SECONDS).toFixed(1)),
  retried: Number(sample('fib_pool_tasks_retried_total'))
}))
process.exit(0)
