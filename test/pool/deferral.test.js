import { test } from 'tap'
import { DEFER_TARGET, deferByMs, nextToStart } from '../../src/pool/deferral.js'

// Queue entries (queue.js) in start order, each a task admitted at `admitted` (ms) predicted to
// compute `costMs`, held back at the most until `deferBy`.
const entries = (...tasks) => tasks.map(([name, admitted, costMs, deferBy = Infinity]) => ({ item: { name, admitted, costMs, deferBy }, cost: costMs }))
const next = (list, now, p99Ms) => nextToStart(list, now, p99Ms)?.item.name

test('nothing waits: nothing starts', async (t) => {
  t.equal(nextToStart([], 0, 100), undefined)
  t.equal(nextToStart([], 0, Infinity), undefined)
})

test('with no recent p99 yet, the first in order starts, however late', async (t) => {
  t.equal(next(entries(['late', 0, 10, 0], ['fresh', 99, 10]), 100, Infinity), 'late')
})

test(`a task that would end past ${DEFER_TARGET} of the recent p99 even if it started now gives way to the first that would not`, async (t) => {
  // A target of 80 ms: started at 100, the first two would end 110 and 100 ms after they came,
  // the third 20.
  const list = entries(['late', 0, 10], ['also late', 10, 10], ['fresh', 90, 10], ['fresh too', 95, 10])
  t.equal(next(list, 100, 100), 'fresh')
  t.equal(next(list, 60, 100), 'late', 'at 60 the first ends 70 ms after it came: in time')
  t.equal(next(list, 80, 100), 'also late', 'at 80 the second ends 80 ms after it came: just in time')
})

test('a task whose compute alone is past the target is not held back: waiting cannot make it later than it is', async (t) => {
  t.equal(next(entries(['dear', 95, 90], ['cheap', 99, 1]), 100, 100), 'dear')
})

test('when no task can end within the target, the first in order starts', async (t) => {
  t.equal(next(entries(['late', 0, 10], ['later', 5, 20]), 200, 100), 'late')
})

test('a task held back starts first once it would start past its deferBy, within half the compute of the one it gives way to', async (t) => {
  // The fresh task computes in 10 ms: a held-back task due to start by 104 goes first at 100.
  t.equal(next(entries(['late', 0, 10, 104], ['fresh', 90, 10]), 100, 100), 'late')
  t.equal(next(entries(['late', 0, 10, 106], ['fresh', 90, 10]), 100, 100), 'fresh')
  // Of several, the one due to start first.
  t.equal(next(entries(['late', 0, 10, 103], ['later', 5, 10, 101], ['fresh', 90, 10]), 100, 100), 'later')
})

test('a task may be held back until 1.6 times the latency first come, first served would have given it', async (t) => {
  // 10 ms of compute after 40 of waiting: answered by 80 ms, so started by 70.
  t.equal(deferByMs(10, 40), 70)
  t.equal(deferByMs(30, 0), 18)
})
