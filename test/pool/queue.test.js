import { test } from 'tap'
import { CostQueue } from '../../src/pool/queue.js'

// Drains the queue, returning the items in the order they would start.
const drain = (queue) => Array.from({ length: queue.size }, () => queue.shift())

test('tasks start cheapest first, equal costs in the order they came', async (t) => {
  const queue = new CostQueue({ bypass: () => Infinity })
  for (const [item, cost] of [['a', 30], ['b', 10], ['c', 20], ['d', 10], ['e', 5]]) queue.push(item, cost)
  t.equal(queue.size, 5)
  t.equal(queue.work, 75)
  t.same(drain(queue), ['e', 'b', 'd', 'c', 'a'])
  t.equal(queue.work, 0)
  t.equal(queue.shift(), undefined, 'an empty queue gives nothing')
})

test('place() says where a task would wait and the work ahead of it, without queueing it', async (t) => {
  const queue = new CostQueue({ bypass: () => Infinity })
  queue.push('big', 70)
  queue.push('small', 2)
  queue.push('mid', 6)
  t.same(queue.place(4), { index: 1, ahead: 2 })
  t.same(queue.place(6), { index: 2, ahead: 8 }, 'behind an equal cost')
  t.same(queue.place(100), { index: 3, ahead: 78 })
  t.same(queue.place(1), { index: 0, ahead: 0 })
  t.equal(queue.size, 3)
})

test('an expensive task is overtaken by at most `bypass` of cheaper work, then starts', async (t) => {
  const queue = new CostQueue({ bypass: () => 25 })
  queue.push('big', 70)
  for (let i = 1; i <= 6; i++) queue.push(`small${i}`, 10)
  // 10 + 10 fit in 25 ms of overtaking; the third small task would make it 30.
  t.same(drain(queue), ['small1', 'small2', 'big', 'small3', 'small4', 'small5', 'small6'])
})

test('a task placed behind an exhausted one keeps that one\'s place for everything behind it', async (t) => {
  const queue = new CostQueue({ bypass: () => 15 })
  queue.push('mid', 20)
  queue.push('big', 70)
  queue.push('small1', 10) // overtakes both: each has been overtaken by 10 ms now
  queue.push('small2', 10) // would bring them to 20: waits behind both
  t.same(queue.place(6), { index: 3, ahead: 100 }, 'a 6 ms task would bring them to 16: behind both, ahead of small2')
  t.same(queue.place(5), { index: 0, ahead: 0 }, 'a 5 ms task still fits in their bound: first')
  t.same(drain(queue), ['small1', 'mid', 'big', 'small2'])
})

test('a task dearer than `bypass` never overtakes anything', async (t) => {
  const queue = new CostQueue({ bypass: () => 50 })
  queue.push('big', 100)
  queue.push('bigger', 200)
  queue.push('huge', 60)
  t.same(drain(queue), ['big', 'bigger', 'huge'], 'huge (60) is cheaper than bigger, but 60 ms is over the bound')
})

test('a cancelled task leaves the queue and its predicted work with it', async (t) => {
  const queue = new CostQueue({ bypass: () => Infinity })
  queue.push('a', 10)
  const b = queue.push('b', 20)
  queue.push('c', 30)
  t.equal(queue.delete(b), true)
  t.equal(queue.work, 40)
  t.same(queue.place(25), { index: 1, ahead: 10 }, 'nothing of b is left ahead of a new task')
  t.equal(queue.delete(b), false, 'a task already gone is not removed twice')
  t.same(drain(queue), ['a', 'c'])
})

test('the queued work is exactly zero once the queue empties, whatever the rounding', async (t) => {
  const queue = new CostQueue({ bypass: () => Infinity })
  const costs = [0.1, 0.2, 0.7, 1e-9, 3.3]
  const entries = costs.map((cost, i) => queue.push(i, cost))
  t.equal(queue.shift(), 3, 'the cheapest first')
  queue.delete(entries[2])
  t.ok(Math.abs(queue.work - (0.1 + 0.2 + 3.3)) < 1e-9)
  drain(queue)
  t.equal(queue.work, 0)
})
