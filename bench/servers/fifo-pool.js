// The open loop's plain peer: a shared first-come-first-served pool of THREADS worker threads
// behind raw `node:http`, nothing else (no Fastify, no Piscina, no deadline, no admission). The
// pool a Node engineer writes in twenty lines, and the one a scheduling policy must beat. The
// dispatch is the worker_threads pool baseline's (dispatcher.js); only the HTTP layer differs.
import http from 'node:http'
import { Worker } from 'node:worker_threads'
import { PORT, THREADS } from './common.js'
import { dispatcher } from './dispatcher.js'

// EXTRA_CPU_US: main-thread work added to each request, in microseconds (a busy loop), to measure
// what the service's extra CPU a request costs a pool with no other difference.
const EXTRA_CPU_US = Number(process.env.EXTRA_CPU_US ?? 0)
const spin = (us) => {
  const end = performance.now() + us / 1000
  while (performance.now() < end);
}

const threads = Array.from({ length: THREADS }, () => new Worker(new URL('./pool-thread.js', import.meta.url)))
const { answered, compute } = dispatcher(threads, (thread, task) => thread.postMessage(task))
for (const thread of threads) thread.on('message', (answer) => answered(thread, answer))

http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost')
  if (url.pathname === '/health') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}')
  if (EXTRA_CPU_US > 0) spin(EXTRA_CPU_US)
  const num = Number(url.searchParams.get('num'))
  if (url.pathname !== '/fib' || !Number.isInteger(num) || num < 0) return res.writeHead(400).end()
  compute(num).then((body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)))
}).listen(PORT, '127.0.0.1')
