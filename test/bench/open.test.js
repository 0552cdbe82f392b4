import { test } from 'tap'
import { offeredShare } from '../../bench/open.js'

test('offeredShare: the compute of every request answered, over the window and the threads', async (t) => {
  const summary = { dropped: 5, classes: { 28: { ok: 90, notOk: 10 }, 35: { ok: 2, notOk: 0 } } }
  const classMs = { 28: 5, 35: 150 }
  t.equal(offeredShare(summary, classMs, 2, 2), (100 * 5 + 2 * 150) / 4000, '503s count as offered, dropped requests (no num) do not')
  t.equal(offeredShare({ dropped: 0, classes: { 28: { ok: 0, notOk: 0 } } }, classMs, 2, 2), 0)
})
