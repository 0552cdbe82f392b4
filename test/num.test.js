import { test } from 'tap'
import { MAX_NUM_LENGTH, parseNum } from '../src/num.js'

test('plain decimals from 0 to the maximum are accepted', async (t) => {
  t.same(parseNum('0', 45), { num: 0 })
  t.same(parseNum('45', 45), { num: 45 })
  t.same(parseNum('007', 45), { num: 7 }, 'leading zeros are still plain decimal')
})

test('each kind of bad num gets its own message', async (t) => {
  t.match(parseNum(undefined, 45).message, /num is required/)
  t.match(parseNum('', 45).message, /num is empty/)
  t.match(parseNum(['1', '2'], 45).message, /num was given 2 times/)
  t.match(parseNum('1'.repeat(MAX_NUM_LENGTH + 1), 45).message, /num is too long \(21 characters\)/)
  t.match(parseNum('-5', 45).message, /num must not be negative/)
  t.match(parseNum('46', 45).message, /num must be at most 45, got 46/)
  for (const bad of ['abc', '1e2', '0x10', ' 5', '+5', '1.5', 'Infinity', '5 ', '٣']) {
    t.match(parseNum(bad, 45).message, /num must be a plain decimal integer/, JSON.stringify(bad))
  }
})
