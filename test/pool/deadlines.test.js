import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'tap'
import { Deadlines } from '../../src/pool/deadlines.js'

const MS = 30

// Deadlines of MS that record when each item expired, ms after `started`.
function setup () {
  const started = performance.now()
  const expired = []
  const deadlines = new Deadlines(MS, (item) => expired.push([item, performance.now() - started]))
  return { deadlines, expired, started }
}

test('an item still pending at its deadline expires, not before', async (t) => {
  const { deadlines, expired } = setup()
  deadlines.add('a')
  await sleep(MS * 4)
  t.equal(expired.length, 1)
  t.equal(expired[0][0], 'a')
  t.ok(expired[0][1] >= MS, `after ${MS} ms (${expired[0][1].toFixed(1)})`)
})

test('an item deleted before its deadline never expires', async (t) => {
  const { deadlines, expired } = setup()
  deadlines.delete(deadlines.add('a'))
  await sleep(MS * 3)
  t.same(expired, [])
})

test('items expire in the order they came, each at its own deadline', async (t) => {
  const { deadlines, expired, started } = setup()
  deadlines.add('a')
  await sleep(MS / 2)
  const added = performance.now() - started
  deadlines.add('b')
  deadlines.add('c')
  await sleep(MS * 4)
  t.same(expired.map(([item]) => item), ['a', 'b', 'c'])
  t.ok(expired[1][1] >= added + MS, `b after its own ${MS} ms (added at ${added.toFixed(1)}, expired at ${expired[1][1].toFixed(1)})`)
})

test('the timer waits for the next pending item once the first is deleted', async (t) => {
  const { deadlines, expired, started } = setup()
  const first = deadlines.add('a')
  await sleep(MS / 2)
  const added = performance.now() - started
  deadlines.add('b')
  deadlines.delete(first)
  await sleep(MS * 4)
  t.same(expired.map(([item]) => item), ['b'])
  t.ok(expired[0][1] >= added + MS, `b at its own deadline, not a's (added at ${added.toFixed(1)}, expired at ${expired[0][1].toFixed(1)})`)
})

test('an item added after the timer went idle gets a timer again', async (t) => {
  const { deadlines, expired } = setup()
  deadlines.add('a')
  await sleep(MS * 3)
  deadlines.add('b')
  await sleep(MS * 3)
  t.same(expired.map(([item]) => item), ['a', 'b'])
})

test('close expires nothing more', async (t) => {
  const { deadlines, expired } = setup()
  deadlines.add('a')
  deadlines.close()
  await sleep(MS * 3)
  t.same(expired, [])
})

test('an entry deleted from the middle, the end or twice leaves the others to expire in order', async (t) => {
  const { deadlines, expired } = setup()
  const [, b, , d] = ['a', 'b', 'c', 'd'].map((item) => deadlines.add(item))
  deadlines.delete(b)
  deadlines.delete(d)
  deadlines.delete(b)
  deadlines.add('e')
  await sleep(MS * 4)
  t.same(expired.map(([item]) => item), ['a', 'c', 'e'])
})

test('an entry deleted once it has expired changes nothing', async (t) => {
  const { deadlines, expired } = setup()
  const a = deadlines.add('a')
  await sleep(MS * 3)
  deadlines.delete(a)
  deadlines.add('b')
  await sleep(MS * 3)
  t.same(expired.map(([item]) => item), ['a', 'b'])
})

test('an entry deleted after close changes nothing, and later items expire', async (t) => {
  const { deadlines, expired } = setup()
  const a = deadlines.add('a')
  deadlines.add('b')
  deadlines.close()
  deadlines.delete(a)
  deadlines.add('c')
  await sleep(MS * 3)
  t.same(expired.map(([item]) => item), ['c'])
})
