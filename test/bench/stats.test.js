import { test } from 'tap'
import { median, percentile, spread } from '../../bench/stats.js'

test('median is the lower middle value, leaving its input as it was', async (t) => {
  const values = [3, 1, 2]
  t.equal(median(values), 2)
  t.same(values, [3, 1, 2])
  t.equal(median([4, 1, 3, 2]), 2, 'of an even count, the smaller middle value')
})

test('percentile of sorted values, the last for p = 1', async (t) => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1)
  t.equal(percentile(sorted, 0.99), 100)
  t.equal(percentile(sorted, 0.5), 51)
  t.equal(percentile(sorted, 1), 100)
})

test('spread is [median, min, max] of the values known', async (t) => {
  t.same(spread([5, undefined, 1, null, 3]), [3, 1, 5])
  t.equal(spread([undefined, null]), undefined)
})
