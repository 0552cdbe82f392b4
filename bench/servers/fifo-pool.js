// The open loop's plain peer: a shared first-come-first-served pool of THREADS worker threads
// behind raw `node:http`, nothing else (no Fastify, no Piscina, no deadline, no admission). The
// pool a Node engineer writes in twenty lines, and the one a scheduling policy must beat.
import http from 'node:http'
import { Worker } from 'node:worker_threads'
import { PORT, THREADS } from './common.js'

const idle = Array.from({ length: THREADS }, () => new Worker(new URL('./pool-thread.js', import.meta.url)))
const waiting = []
const replies = new Map()
let nextId = 0

function post (thread, { num, res }) {
  const id = nextId++
  replies.set(id, res)
  thread.postMessage({ id, num })
}

for (const thread of idle) {
  thread.on('message', ({ id, ...body }) => {
    replies.get(id).writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    replies.delete(id)
    const next = waiting.shift()
    if (next) post(thread, next)
    else idle.push(thread)
  })
}

http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost')
  if (url.pathname === '/health') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}')
  const num = Number(url.searchParams.get('num'))
  if (url.pathname !== '/fib' || !Number.isInteger(num) || num < 0) return res.writeHead(400).end()
  const task = { num, res }
  const thread = idle.pop()
  if (thread) post(thread, task)
  else waiting.push(task)
}).listen(PORT, '127.0.0.1')
