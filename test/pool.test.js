import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'tap'
import { build, TEST_WORKER, until, value } from './helper.js'

const threadIds = (app) => app.pool.piscina.threads.map((thread) => thread.threadId).sort()

test('the pool starts POOL_THREADS threads at once and keeps the same ones', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2' })
  t.equal(app.pool.threads, 2)
  const started = threadIds(app)
  t.equal(started.length, 2, 'both threads exist before the first request')
  const seen = new Set()
  for (let round = 0; round < 3; round++) {
    const results = await Promise.all(Array.from({ length: 8 }, () => app.inject('/fib?num=25')))
    for (const res of results) seen.add(res.json().threadId)
    await sleep(300) // idle between bursts: no idle timeout may retire a thread
  }
  t.same([...seen].sort(), started, 'every task ran on one of the threads started first')
  t.same(threadIds(app), started)
})

test('closing the app closes the pool', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  await app.close()
  t.equal(app.pool.piscina.threads.length, 0)
})

test('the capacity is the threads plus POOL_MAX_QUEUE', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2', POOL_MAX_QUEUE: '3' })
  t.equal(app.pool.capacity, 5)
  t.equal(app.pool.inFlight, 0)
  t.equal(app.pool.full, false)
})

test('with POOL_TASKS_PER_THREAD=2 a second task waits on a busy thread, never a third', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' }, { workerFile: TEST_WORKER })
  const tasks = [app.inject('/fib?num=30'), app.inject('/fib?num=30')]
  await until(() => app.pool.inFlight === 2)
  t.equal(app.pool.piscina.queueSize, 0, 'the second task was handed to the thread at once')
  tasks.push(app.inject('/fib?num=30'))
  await until(() => app.pool.inFlight === 3)
  t.equal(app.pool.piscina.queueSize, 1, 'the third waits in the shared queue')
  for (const res of await Promise.all(tasks)) t.equal(res.statusCode, 200)
})

test('with POOL_TASKS_PER_THREAD=1 every waiting task stays in the shared queue', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', POOL_TASKS_PER_THREAD: '1' }, { workerFile: TEST_WORKER })
  const tasks = [app.inject('/fib?num=30'), app.inject('/fib?num=30')]
  await until(() => app.pool.inFlight === 2)
  t.equal(app.pool.piscina.queueSize, 1)
  for (const res of await Promise.all(tasks)) t.equal(res.statusCode, 200)
})

// Two tasks on one thread; the client of one goes away, which terminates the thread under both.
async function abandonOneOfTwo (t, abandoned) {
  const { app } = await build(t, { POOL_THREADS: '1' }, { workerFile: TEST_WORKER })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${app.server.address().port}/fib?num=30`
  const gone = new AbortController()
  const requests = [0, 1].map((i) => fetch(url, i === abandoned ? { signal: gone.signal } : {}))
  await until(() => app.pool.inFlight === 2)
  t.equal(app.pool.piscina.queueSize, 0, 'both tasks are on the thread')
  gone.abort()
  await t.rejects(requests[abandoned])
  const kept = await requests[1 - abandoned]
  t.equal(kept.status, 200, 'the other task ran again on the new thread and answered')
  t.equal((await kept.json()).result, 30)
  const metrics = (await app.inject('/metrics')).body
  t.equal(value(metrics, 'fib_pool_tasks_retried_total'), 1)
  t.equal(value(metrics, 'fib_pool_tasks_aborted_total', 'reason="client_gone"'), 1)
  t.equal(value(metrics, 'fib_pool_tasks_failed_total'), 0)
}

test('aborting the task waiting on a thread runs the task it interrupted again', (t) => abandonOneOfTwo(t, 1))

test('aborting the running task runs the task waiting behind it on a new thread', (t) => abandonOneOfTwo(t, 0))

// This process's threads by id, each with its name and nice value (Linux /proc).
function threadsNow () {
  return new Map(readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    // The nice value is field 19; the fields after the ")" that ends the name start at 3.
    return [tid, { name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(), nice: Number(stat.split(') ')[1].split(' ')[16]) }]
  }))
}

test('worker threads run at POOL_THREAD_NICE, the main thread keeps its priority', async (t) => {
  const before = threadsNow()
  const mainNice = before.get(String(process.pid)).nice
  const { app } = await build(t, { POOL_THREADS: '2', POOL_THREAD_NICE: '7' })
  // New worker threads at that nice value: the pool's two (tap's loader threads keep the main's).
  const lowered = [...threadsNow()].filter(([tid, { name, nice }]) => name === 'WorkerThread' && !before.has(tid) && nice === mainNice + 7)
  t.equal(lowered.length, 2, 'both pool threads run 7 lower')
  t.equal(threadsNow().get(String(process.pid)).nice, mainNice)
  await app.close()
})
