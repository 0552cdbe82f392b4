import { test } from 'tap'
import { mixSequence } from '../../bench/k6/mix.js'

test('mixSequence: the same draw for the same seed, another for another, in the mix\'s shares', async (t) => {
  const mix = [[28, 0.6], [30, 0.3], [32, 0.08], [35, 0.02]]
  const draw = (seed) => Array.from({ length: 10_000 }, (_, i) => mixSequence(mix, seed)(i))
  const first = draw(1)
  t.same(draw(1), first)
  t.not(draw(2).join(), first.join())
  for (const [num, share] of mix) {
    const seen = first.filter((n) => n === num).length / first.length
    t.ok(Math.abs(seen - share) < 0.02, `fib(${num}) drawn ${seen}, about ${share}`)
  }
})

test('mixSequence: the last num for whatever shares that do not reach 1 leave', async (t) => {
  const nums = Array.from({ length: 1000 }, (_, i) => mixSequence([[20, 0.25], [30, 0.25]], 0)(i))
  t.ok(nums.filter((n) => n === 30).length > 600, 'about three quarters the last num')
})
