import { test } from 'tap'
import { RecentQuantile } from '../../src/pool/recent-quantile.js'

const adding = (recent, values) => { for (const value of values) recent.add(value) }
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

test('before `every` values came there is no quantile: Infinity', async (t) => {
  const recent = new RecentQuantile(10, 0.99, 5)
  t.equal(recent.value, Infinity)
  adding(recent, [1, 2, 3, 4])
  t.equal(recent.value, Infinity)
  recent.add(5)
  t.equal(recent.value, 5)
})

test('the quantile is of the values, not of the order they came in', async (t) => {
  const recent = new RecentQuantile(200, 0.99, 200)
  adding(recent, range(1, 200).reverse())
  t.equal(recent.value, 199, 'the 199th of 200 sorted')
  const median = new RecentQuantile(5, 0.5, 5)
  adding(median, [30, 10, 50, 20, 40])
  t.equal(median.value, 30)
})

test('it is computed again only every `every` values', async (t) => {
  const recent = new RecentQuantile(4, 0.5, 2)
  adding(recent, [1, 1])
  t.equal(recent.value, 1)
  recent.add(100)
  t.equal(recent.value, 1, 'one value since: the last quantile stands')
  recent.add(100)
  t.equal(recent.value, 100)
})

test('once `count` values are kept, each new one takes the oldest one\'s place', async (t) => {
  const recent = new RecentQuantile(3, 0.99, 3)
  adding(recent, [90, 80, 70])
  t.equal(recent.value, 90)
  adding(recent, [1, 2, 3])
  t.equal(recent.value, 3, 'the first three are forgotten')
  adding(recent, [50, 4, 5])
  t.equal(recent.value, 50)
})
