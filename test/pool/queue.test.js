import { test } from 'tap'
import { DeadlineQueue } from '../../src/pool/queue.js'

// Drains the queue, returning the items in the order they would start.
const drain = (queue) => [...queue].map((entry) => queue.delete(entry) && entry.item)

test('tasks start earliest deadline first, equal deadlines in the order they came', async (t) => {
  const queue = new DeadlineQueue()
  for (const [item, cost, deadline] of [['a', 30, 300], ['b', 10, 100], ['c', 20, 200], ['d', 10, 100], ['e', 5, 50]]) queue.push(item, cost, deadline)
  t.equal(queue.size, 5)
  t.equal(queue.work, 75)
  t.same(drain(queue), ['e', 'b', 'd', 'c', 'a'])
  t.equal(queue.work, 0)
  t.same([...queue], [], 'an empty queue gives nothing')
})

test('the order is the deadlines\', not the costs\': a dear task due first starts first', async (t) => {
  const queue = new DeadlineQueue()
  queue.push('dear, due soon', 70, 10)
  queue.push('cheap, due later', 2, 20)
  t.same([...queue].map(({ item, cost }) => [item, cost]), [['dear, due soon', 70], ['cheap, due later', 2]], 'waiting entries, in start order')
  t.same(drain(queue), ['dear, due soon', 'cheap, due later'])
})

test('place() says where a task would wait and the work ahead of it, without queueing it', async (t) => {
  const queue = new DeadlineQueue()
  queue.push('big', 70, 700)
  queue.push('small', 2, 20)
  queue.push('mid', 6, 60)
  t.same(queue.place(40), { index: 1, ahead: 2 })
  t.same(queue.place(60), { index: 2, ahead: 8 }, 'behind an equal deadline')
  t.same(queue.place(1000), { index: 3, ahead: 78 })
  t.same(queue.place(1), { index: 0, ahead: 0 })
  t.equal(queue.size, 3)
  const spot = queue.place(30)
  queue.push('at the place given', 4, 30, spot)
  t.same(drain(queue), ['small', 'at the place given', 'mid', 'big'])
})

test('place() puts a task behind every waiting task it may not pass, with the work ahead of it there', async (t) => {
  const queue = new DeadlineQueue()
  queue.push('a', 10, 100)
  queue.push('b', 20, 200)
  queue.push('c', 30, 300)
  const asked = []
  const spot = queue.place(50, (item, ahead) => {
    asked.push([item, ahead])
    return item !== 'b'
  })
  t.same(asked, [['a', 0], ['b', 10], ['c', 30]], 'each task it would pass, with the cost ahead of it now')
  t.same(spot, { index: 2, ahead: 30 }, 'behind b, still ahead of c')
  t.same(queue.place(50, () => false), { index: 3, ahead: 60 }, 'passing none, it goes last')
  t.same(queue.place(250, (item) => item !== 'a'), { index: 2, ahead: 30 }, 'behind its deadline\'s place in any case')
})

test('a cancelled task leaves the queue and its predicted work with it', async (t) => {
  const queue = new DeadlineQueue()
  queue.push('a', 10, 1)
  const b = queue.push('b', 20, 2)
  queue.push('c', 30, 3)
  t.equal(queue.delete(b), true)
  t.equal(queue.work, 40)
  t.same(queue.place(2.5), { index: 1, ahead: 10 }, 'nothing of b is left ahead of a new task')
  t.equal(queue.delete(b), false, 'a task already gone is not removed twice')
  t.same(drain(queue), ['a', 'c'])
})

test('the queued work is exactly zero once the queue empties, whatever the rounding', async (t) => {
  const queue = new DeadlineQueue()
  const costs = [0.1, 0.2, 0.7, 1e-9, 3.3]
  const entries = costs.map((cost, i) => queue.push(i, cost, cost))
  const [first] = queue
  queue.delete(first)
  t.equal(first.item, 3, 'the earliest first')
  queue.delete(entries[2])
  t.ok(Math.abs(queue.work - (0.1 + 0.2 + 3.3)) < 1e-9)
  drain(queue)
  t.equal(queue.work, 0)
})
