import { PerformanceObserver } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'tap'
import { RecentSizes } from '../../src/pool/recent-sizes.js'

test('before any task came, no task is cheaper than a new one, and the mean is 0', async (t) => {
  t.equal(new RecentSizes(4).cheaperThan(10), 0)
  t.equal(new RecentSizes(4).mean, 0)
})

test('the mean is the recent tasks\' and forgets the oldest with them', async (t) => {
  const recent = new RecentSizes(3)
  for (const size of [1, 2, 6]) recent.add(size)
  t.equal(recent.mean, 3)
  recent.add(10)
  t.equal(recent.mean, 6)
})

test('the share counts the recent tasks strictly cheaper: equal sizes are not', async (t) => {
  const recent = new RecentSizes(4)
  for (const size of [1, 2, 2, 5]) recent.add(size)
  t.equal(recent.cheaperThan(2), 0.25)
  t.equal(recent.cheaperThan(3), 0.75)
  t.equal(recent.cheaperThan(6), 1)
  t.equal(recent.cheaperThan(1), 0)
})

test('reading the share adds nothing: only add() does', async (t) => {
  const recent = new RecentSizes(4)
  recent.add(1)
  recent.cheaperThan(9)
  recent.cheaperThan(9)
  t.equal(recent.cheaperThan(2), 1)
})

test('once `count` tasks are kept, each new one takes the oldest one\'s place', async (t) => {
  const recent = new RecentSizes(3)
  for (const size of [1, 1, 1]) recent.add(size)
  t.equal(recent.cheaperThan(2), 1)
  recent.add(5)
  t.equal(recent.cheaperThan(2), 2 / 3, 'the first 1 is forgotten, not the last')
  recent.add(5)
  recent.add(5)
  t.equal(recent.cheaperThan(2), 0)
  recent.add(1)
  t.equal(recent.cheaperThan(2), 1 / 3, 'and the ring goes round again')
})

test('reading the recent sizes makes no garbage: a million reads of both take (almost) no collection', async (t) => {
  const recent = new RecentSizes(128)
  for (let i = 0; i < 128; i++) recent.add(1.618 ** (26 + (i % 9)))
  let collections = 0
  const observer = new PerformanceObserver((list) => { collections += list.getEntries().length })
  observer.observe({ entryTypes: ['gc'] })
  let read = 0
  for (let i = 0; i < 1_000_000; i++) read += recent.cheaperThan(1.618 ** 30) + recent.mean
  // The entries of the collections come later, as tasks of the event loop.
  await sleep(100)
  observer.disconnect()
  t.ok(read > 0)
  // Boxing each number read, as a for...of over a plain array did, is about 4 KB a pair of reads:
  // 4 GB here, a hundred collections or more.
  t.ok(collections < 20, `${collections} collections`)
})
