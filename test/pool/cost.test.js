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

test('measurements with no work or no time say nothing', async (t) => {
  const model = new CostModel()
  model.observe(0, 5)
  model.observe(10, NaN)
  t.equal(model.predict(10), 0)
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
