import { test } from 'tap'
import { Balancer } from '../../src/pool/balancer.js'

// Piscina's view of a worker: its id and how many tasks it runs (a single abortable task counts
// as Infinity in Piscina, with isRunningAbortableTask set).
const worker = (id, tasks) => ({ id, currentUsage: tasks === 1 ? Infinity : tasks, isRunningAbortableTask: tasks === 1 })

test('an idle thread is chosen first, and counted as holding the task', async (t) => {
  const balancer = new Balancer()
  const workers = [worker(1, 1), worker(2, 0)]
  const { thread } = balancer.place(() => balancer.balance({}, workers), false)
  t.equal(thread, 2)
  t.equal(balancer.idle(2), 1, 'thread 2 holds it; the pool has seen nothing on thread 1')
  balancer.settled(thread)
  t.equal(balancer.idle(2), 2)
})

test('a busy thread takes a second task only when the pool allows it', async (t) => {
  const balancer = new Balancer()
  const workers = [worker(1, 1), worker(2, 2)]
  t.equal(balancer.place(() => balancer.balance({}, workers), false).thread, undefined, 'not allowed: no thread')
  t.equal(balancer.idle(2), 1, 'the unplaced task is counted as taking a thread')
  t.equal(balancer.place(() => balancer.balance({}, workers), true).thread, 1, 'allowed: the thread with one task, never the one with two')
})

test('a thread holding two tasks is idle only once both settle', async (t) => {
  const balancer = new Balancer()
  const first = balancer.place(() => balancer.balance({}, [worker(7, 0)]), false)
  const second = balancer.place(() => balancer.balance({}, [worker(7, 1)]), true)
  t.same([first.thread, second.thread], [7, 7])
  t.equal(balancer.idle(1), 0)
  balancer.settled(first.thread)
  t.equal(balancer.idle(1), 0)
  balancer.settled(second.thread)
  t.equal(balancer.idle(1), 1)
})

test('a task placed while no thread was ready frees its place when it settles', async (t) => {
  const balancer = new Balancer()
  const { thread } = balancer.place(() => null, false) // Piscina kept it: no balance() call
  t.equal(thread, undefined)
  t.equal(balancer.idle(1), 0)
  balancer.settled(thread)
  t.equal(balancer.idle(1), 1)
})

test('two tasks placed while no thread was ready free both places once settled', async (t) => {
  const balancer = new Balancer()
  const placed = [balancer.place(() => null, false), balancer.place(() => null, false)]
  t.equal(balancer.idle(2), 0)
  for (const { thread } of placed) balancer.settled(thread)
  t.equal(balancer.idle(2), 2)
})
