import { test } from 'tap'
import { MAX_FACTOR, MIN_FACTOR, WaitError } from '../../src/pool/wait-error.js'

// Real waits of `ratios` times their prediction (of 500 ms), in turn, `times` over.
const observeAll = (error, ratios, times = 1) => {
  for (let i = 0; i < times; i++) for (const ratio of ratios) error.observe(500, 500 * ratio)
}
// The ratios 1.00, 1.01, ... 2.00, shuffled the same way every time: a quantile q of them is 1 + q.
const spread = Array.from({ length: 101 }, (_, i) => 1 + ((i * 37) % 101) / 100)

test('waits that come out as predicted, or shorter, leave the factor at 1', async (t) => {
  const error = new WaitError(0.99)
  t.equal(error.factor, MIN_FACTOR)
  observeAll(error, [1, 0.5, 0.9, 1], 50)
  t.equal(error.factor, 1)
})

test('the factor settles where the given share of the waits is under it', async (t) => {
  for (const quantile of [0.5, 0.9, 0.99]) {
    const error = new WaitError(quantile)
    observeAll(error, spread, 100)
    // It moves a step at every wait: its median over the next hundred rounds.
    const factors = []
    for (let round = 0; round < 100; round++) {
      for (const ratio of spread) {
        error.observe(500, 500 * ratio)
        factors.push(error.factor)
      }
    }
    const settled = factors.sort((a, b) => a - b)[factors.length >> 1]
    t.ok(Math.abs(settled - (1 + quantile)) < 0.1, `quantile ${quantile}: ${settled.toFixed(3)}`)
  }
})

test('waits that all run 1.5 times their prediction take the factor to 1.5, and it comes back once they run as predicted', async (t) => {
  const error = new WaitError(0.99)
  observeAll(error, [1.5], 100)
  t.ok(error.factor >= 1.5 && error.factor < 1.5 * 1.1, `raised to ${error.factor.toFixed(3)}`)
  observeAll(error, [1], 1000)
  t.ok(error.factor < 1.05, `lowered to ${error.factor.toFixed(3)}`)
})

test('one late wait raises the factor by a tenth at the most', async (t) => {
  const error = new WaitError(0.99)
  error.observe(500, 5000)
  t.ok(error.factor > 1 && error.factor <= 1.1, `${error.factor}`)
})

test('the factor stays under 2 however late the waits run', async (t) => {
  const error = new WaitError(0.99)
  observeAll(error, [10], 100)
  t.equal(error.factor, MAX_FACTOR)
})

test('a wait predicted at 0 or not a number teaches nothing', async (t) => {
  const error = new WaitError(0.99)
  error.observe(0, 100)
  error.observe(NaN, 100)
  error.observe(100, NaN)
  t.equal(error.factor, 1)
})
