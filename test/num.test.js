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

test('each message says what to send instead, in full', async (t) => {
  t.same(parseNum(undefined, 45), { message: 'num is required: give an integer from 0 to 45, e.g. /fib?num=30' })
  t.same(parseNum(undefined, 12), { message: 'num is required: give an integer from 0 to 12, e.g. /fib?num=12' }, 'the example is never over the maximum')
  t.same(parseNum('', 45), { message: 'num is empty: give an integer from 0 to 45' })
  t.same(parseNum(['1', '2'], 45), { message: 'num was given 2 times: give it once' })
  t.same(parseNum('1'.repeat(21), 45), { message: 'num is too long (21 characters): give an integer from 0 to 45' })
  t.same(parseNum('-5', 45), { message: 'num must not be negative, got -5: give an integer from 0 to 45' })
  t.same(parseNum('abc', 45), { message: 'num must be a plain decimal integer (digits only) from 0 to 45, got "abc"' })
  t.same(parseNum('46', 45), { message: 'num must be at most 45, got 46' })
})

test('only a whole negative number is called negative; other dashes are not decimal', async (t) => {
  t.match(parseNum('-55', 45).message, /^num must not be negative, got -55/)
  for (const bad of ['5-5', '-5abc', '--5', '-']) {
    t.match(parseNum(bad, 45).message, /^num must be a plain decimal integer/, JSON.stringify(bad))
  }
})

test('a num of exactly the longest length is parsed, one digit more is refused unread', async (t) => {
  t.match(parseNum('0'.repeat(MAX_NUM_LENGTH - 1) + '7', 45), { num: 7 })
  t.match(parseNum('0'.repeat(MAX_NUM_LENGTH) + '7', 45).message, /num is too long/)
})
