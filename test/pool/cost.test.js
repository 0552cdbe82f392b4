import { test } from 'tap'
import { CostModel } from '../../src/pool/cost.js'

// A machine on which a task of `work` units takes ms-per-unit x work, give or take `noise`.
function measure (msPerUnit, work, noise = 0) {
  return msPerUnit * work * (1 + noise)
}

test('an untrained model predicts nothing; one measurement sets its rate', async (t) => {
  const model = new CostModel()
  t.equal(model.predict(1000), 0)
  model.observe(100, 5)
  t.equal(model.predict(100), 5)
  t.equal(model.predict(1000), 50, 'proportional to the work')
})

test('a measurement without work, or without a time, changes nothing; one of 0 ms counts', async (t) => {
  const model = new CostModel()
  model.observe(0, 5)
  model.observe(10, NaN)
  t.equal(model.predict(10), 0, 'still untrained')
  model.observe(100, 10)
  model.observe(0, 5)
  model.observe(-1, 5)
  model.observe(10, NaN)
  model.observe(10, -1)
  t.equal(model.predict(100), 10, 'the rate of the one real measurement')
  model.observe(100, 0) // fib(0) and fib(1) compute in well under a microsecond
  t.ok(model.predict(100) < 10, `a task measured at 0 ms lowers the rate (${model.predict(100).toFixed(2)} ms)`)
})

test('the work expected in a time is the prediction turned around; unbounded while nothing has taken time', async (t) => {
  const model = new CostModel()
  t.equal(model.work(10), Infinity, 'untrained')
  model.observe(100, 0)
  t.equal(model.work(10), Infinity, 'every task measured took no time')
  model.observe(200, 10) // 0.05 ms per unit, with the first measurement's weight decayed
  const close = (a, b) => Math.abs(a - b) < 1e-9 * b
  t.ok(close(model.work(10), 10 / model.predict(1)), `${model.work(10)} units in 10 ms`)
  t.ok(close(model.predict(model.work(10)), 10))
})

test('the prediction converges on the machine\'s rate from a wrong start, and follows it when the machine slows down', async (t) => {
  const model = new CostModel()
  model.observe(100, 100) // a first, slow measurement: 1 ms per unit
  const sizes = [1, 1.6, 2.6, 4.2, 11] // the fib mix, PHI^num scaled
  let i = 0
  const observeMany = (msPerUnit, count) => {
    for (let n = 0; n < count; n++, i++) {
      const work = sizes[i % sizes.length]
      model.observe(work, measure(msPerUnit, work, i % 2 ? 0.05 : -0.05))
    }
  }
  observeMany(0.1, 60)
  t.ok(Math.abs(model.predict(10) / 1 - 1) < 0.05, `within 5% of 1 ms after 60 tasks (${model.predict(10).toFixed(3)})`)
  observeMany(0.2, 60)
  t.ok(Math.abs(model.predict(10) / 2 - 1) < 0.05, `within 5% of 2 ms once the machine is twice as slow (${model.predict(10).toFixed(3)})`)
})

test('a burst of tiny tasks moves the rate less than one big task', async (t) => {
  const model = new CostModel()
  model.observe(1000, 10) // 0.01 ms per unit
  // Tiny tasks are mostly fixed overhead: ten times the rate per unit.
  for (let n = 0; n < 5; n++) model.observe(1, 0.1)
  t.ok(model.predict(1000) < 11, `weighted by work, the big measurement still dominates (${model.predict(1000).toFixed(2)} ms)`)
})

test('the fastest rate measured: a task\'s time at it, unchanged by slower measurements or ones of 0 ms', async (t) => {
  const model = new CostModel()
  t.equal(model.fastest(10), Infinity, 'untrained')
  model.observe(10, 0)
  t.equal(model.fastest(10), Infinity, 'a task measured at 0 ms sets no rate')
  model.observe(10, 20) // 2 ms per unit
  t.equal(model.fastest(5), 10)
  model.observe(10, 10) // 1 ms per unit
  for (let n = 0; n < 30; n++) model.observe(10, 40) // the machine four times slower
  t.equal(model.fastest(5), 5, 'the lowest rate, kept')
  t.ok(model.predict(5) > 15, `while the prediction follows the machine (${model.predict(5).toFixed(1)} ms)`)
})

test('a task counts as at most twice its prediction: a thread stopped is not a slower machine', async (t) => {
  const model = new CostModel()
  model.observe(10, 10) // 1 ms per unit
  model.observe(10, 410) // 10 ms of compute and a stop of 400 ms
  t.equal(model.predict(10), 10 * (9 + 20) / 19, `counted as 20 ms (${model.predict(10).toFixed(2)} ms)`)
  t.equal(model.fastest(10), 10, 'the fastest rate is unchanged')
  model.observe(10, 25) // a slower spell, under twice the prediction: learnt whole
  t.equal(model.predict(10), 10 * (0.9 * 29 + 25) / (0.9 * 19 + 10))

  const untrained = new CostModel()
  untrained.observe(10, 410)
  t.equal(untrained.predict(10), 410, 'with nothing to go by, a first measurement counts whole')
})
