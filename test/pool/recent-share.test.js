import { test } from 'tap'
import { RecentShare } from '../../src/pool/recent-share.js'

const setup = () => {
  const clock = { ms: 500 }
  return { clock, share: new RecentShare(1000, { now: () => clock.ms }) }
}

test('a condition that has never held has a share of 0', async (t) => {
  const { clock, share } = setup()
  clock.ms += 5000
  t.equal(share.value, 0)
})

test('a condition that holds for one time constant has a share of 1 - 1/e, and nears 1 as it goes on', async (t) => {
  const { clock, share } = setup()
  share.set(true)
  clock.ms += 1000
  t.ok(Math.abs(share.value - (1 - 1 / Math.E)) < 1e-9)
  clock.ms += 9000
  t.ok(share.value > 0.9999 && share.value <= 1)
})

test('the share decays once the condition stops holding, by 1/e a time constant', async (t) => {
  const { clock, share } = setup()
  share.set(true)
  clock.ms += 10000
  share.set(false)
  const held = share.value
  clock.ms += 1000
  t.ok(Math.abs(share.value - held / Math.E) < 1e-9)
})

test('the share does not depend on how often it is read', async (t) => {
  const { clock, share } = setup()
  const other = new RecentShare(1000, { now: () => clock.ms })
  share.set(true)
  other.set(true)
  const reads = []
  for (let i = 0; i < 10; i++) {
    clock.ms += 100
    reads.push(share.value)
  }
  t.ok(reads.every((value, i) => i === 0 || value > reads[i - 1]), 'rising while it holds')
  t.ok(Math.abs(share.value - other.value) < 1e-9)
})
