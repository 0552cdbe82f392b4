import { test } from 'tap'
import { RecentQuantile, select } from '../../src/pool/recent-quantile.js'

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

test('select finds what a sort would put at each index, duplicates and all', async (t) => {
  let seed = 7
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
  for (const [size, distinct] of [[1, 1], [2, 2], [7, 3], [100, 5], [4000, 4000], [4000, 40]]) {
    const values = Float64Array.from({ length: size }, () => Math.floor(random() * distinct))
    const sorted = values.slice().sort()
    const indices = size <= 100 ? values.keys() : new Set([0, size >> 1, Math.floor(size * 0.99), size - 1])
    for (const k of indices) {
      t.equal(select(values.slice(), k), sorted[k], `${size} values of ${distinct}, index ${k}`)
    }
  }
})
