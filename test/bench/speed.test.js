import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'tap'
import { allowedCpus, slowdownOf, watchSpeed } from '../../bench/speed.js'

test('allowedCpus reads the kernel\'s list of CPUs, ranges and single ones', async (t) => {
  t.same(allowedCpus('Name:\tnode\nCpus_allowed:\t4f\nCpus_allowed_list:\t0-3,6\n'), [0, 1, 2, 3, 6])
  t.same(allowedCpus('Cpus_allowed_list:\t2\n'), [2])
  const own = allowedCpus()
  t.ok(own.length > 0 && own.every(Number.isInteger), 'this process\'s own')
})

// Three timings a second, at 0.1 s, 0.4 s and 0.7 s into it.
const seconds = (...msBySecond) => msBySecond.flatMap((ms, s) => [100, 400, 700].map((at) => [s * 1000 + at, ms]))

test('slowdownOf: the median over the interval against the fastest second, the worst CPU', async (t) => {
  const steady = seconds(1, 1, 1, 1)
  const slowThird = seconds(1, 1, 1.8, 1)
  t.equal(slowdownOf([steady], 2000, 3000), 1)
  t.equal(slowdownOf([steady, slowThird], 2000, 3000), 1.8, 'one CPU slow is the machine slow')
  t.equal(slowdownOf([slowThird], 0, 4000), 1, 'the median: a slow second among fast ones')
  t.equal(slowdownOf([seconds(2, 1.5, 3)], 0, 1000), 2 / 1.5, 'against the fastest second, wherever it is')
})

test('slowdownOf is undefined with nothing to judge by', async (t) => {
  t.equal(slowdownOf([seconds(1, 1), seconds(1, 1)], 5000, 6000), undefined, 'no timing in the interval')
  t.equal(slowdownOf([seconds(1, 1), [[100, 1], [400, 1]]], 0, 1000), undefined, 'a CPU with no second of three timings')
})

test('watchSpeed times each CPU until stopped', async (t) => {
  const started = Date.now()
  const speed = watchSpeed()
  let slowdown
  while (slowdown === undefined && Date.now() - started < 10_000) {
    await sleep(200)
    slowdown = speed.slowdown(started, Date.now())
  }
  t.ok(slowdown > 0 && Number.isFinite(slowdown), `a slowdown once every CPU has a second of timings (${slowdown})`)
  speed.stop()
})
