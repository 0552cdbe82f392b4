import { Piscina } from 'piscina'
import { test } from 'tap'
import { PiscinaDeadlineQueue } from '../../bench/servers/deadline-task-queue.js'

// A task as Piscina hands it to its taskQueue: its input, and its queue options.
const task = (name, deadline, work = 1) => ({ task: { name }, [Piscina.queueOptionsSymbol]: { deadline, work } })

test('PiscinaDeadlineQueue: tasks leave by earliest deadline, then none is left', async (t) => {
  const queue = new PiscinaDeadlineQueue()
  for (const [name, deadline] of [['c', 30], ['a', 10], ['b', 20]]) queue.push(task(name, deadline, 2))
  t.equal(queue.size, 3)
  t.equal(queue.work, 6)
  t.same([queue.shift(), queue.shift(), queue.shift()].map((queued) => queued.task.name), ['a', 'b', 'c'])
  t.equal(queue.size, 0)
  t.equal(queue.shift(), null)
})

test('PiscinaDeadlineQueue: a cancelled task leaves at once, and only once', async (t) => {
  const queue = new PiscinaDeadlineQueue()
  const first = task('a', 10)
  queue.push(first)
  queue.push(task('b', 20))
  t.equal(queue.cancel(first.task), true)
  t.equal(queue.cancel(first.task), false)
  t.equal(queue.shift().task.name, 'b')
  t.equal(queue.cancel({ name: 'never queued' }), false)
})

test('PiscinaDeadlineQueue: a task Piscina removes (aborted while queued) leaves', async (t) => {
  const queue = new PiscinaDeadlineQueue()
  const aborted = task('a', 10)
  queue.push(aborted)
  queue.push(task('b', 20))
  queue.remove(aborted)
  t.equal(queue.size, 1)
  t.equal(queue.shift().task.name, 'b')
})

test('PiscinaDeadlineQueue: a shifted task can no longer be cancelled', async (t) => {
  const queue = new PiscinaDeadlineQueue()
  const only = task('a', 10)
  queue.push(only)
  queue.shift()
  t.equal(queue.cancel(only.task), false)
  t.equal(queue.size, 0)
})
