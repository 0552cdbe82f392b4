import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'tap'
import { Alarm } from '../../src/pool/alarm.js'

// An alarm on a clock that stands still at 1,000 ms, so that a moment sets the timer's delay
// exactly, and the moments it rang with.
const setup = () => {
  const rang = []
  return { rang, alarm: new Alarm((at) => rang.push(at), { now: () => 1000 }) }
}

test('an alarm rings once, with the moment it was set for', async (t) => {
  const { rang, alarm } = setup()
  alarm.set(1020)
  t.equal(alarm.at, 1020)
  await sleep(120)
  t.same(rang, [1020])
  t.equal(alarm.at, Infinity, 'nothing set once it has rung')
})

test('a moment already past rings on the next turn of the event loop', async (t) => {
  const { rang, alarm } = setup()
  alarm.set(900)
  t.same(rang, [], 'not from inside set()')
  await sleep(50)
  t.same(rang, [900])
})

test('a later moment replaces an earlier one: the alarm does not ring at the earlier one', async (t) => {
  const { rang, alarm } = setup()
  alarm.set(1010)
  alarm.set(1150)
  await sleep(60)
  t.same(rang, [], 'not at 1,010')
  await sleep(240)
  t.same(rang, [1150])
})

test('an earlier moment replaces a later one, which then never rings', async (t) => {
  const { rang, alarm } = setup()
  alarm.set(1150)
  alarm.set(1010)
  await sleep(300)
  t.same(rang, [1010])
})

test('Infinity clears the alarm', async (t) => {
  const { rang, alarm } = setup()
  alarm.set(1010)
  alarm.set(Infinity)
  t.equal(alarm.at, Infinity)
  await sleep(100)
  t.same(rang, [])
})

test('setting the moment already set keeps its timer: it rings once', async (t) => {
  const { rang, alarm } = setup()
  alarm.set(1010)
  alarm.set(1010)
  await sleep(100)
  t.same(rang, [1010])
})

test('the alarm can be set again from inside its own ring', async (t) => {
  const rang = []
  const alarm = new Alarm((at) => {
    rang.push(at)
    if (rang.length === 1) alarm.set(at + 10)
  }, { now: () => 1000 })
  alarm.set(1010)
  await sleep(150)
  t.same(rang, [1010, 1020])
})
