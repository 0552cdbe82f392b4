import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'tap'
import { allowedCpus, factorOf, fastestSecond, PROBED_SHARE, slowdownOf, timingsWithin, watchSpeed } from '../../bench/speed.js'

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

test('fastestSecond: the lowest median of a second of three timings or more', async (t) => {
  t.equal(fastestSecond(seconds(2, 1.5, 3)), 1.5)
  t.equal(fastestSecond([[100, 1], [400, 1]]), undefined)
})

test('timingsWithin: the timings from the start of the interval up to its end, not including it', async (t) => {
  const timings = [[100, 1], [200, 2], [200, 3], [300, 4], [400, 5]]
  t.same(timingsWithin(timings, 200, 400), [2, 3, 4])
  t.same(timingsWithin(timings, 150, 250), [2, 3])
  t.same(timingsWithin(timings, 0, 1000), [1, 2, 3, 4, 5])
  t.same(timingsWithin(timings, 500, 600), [])
  t.same(timingsWithin([], 0, 1), [])
})

test('factorOf: each CPU\'s reference over its median in the interval, averaged over the CPUs, half of its distance from 1', async (t) => {
  t.equal(PROBED_SHARE, 0.5)
  t.equal(factorOf([seconds(1, 1), seconds(2, 2)], 0, 2000, [1, 1]), 0.875, 'one CPU at its reference, one at half of it: 0.75 probed')
  t.equal(factorOf([seconds(1, 2)], 1000, 2000, [1]), 0.75, 'the interval only: 0.5 probed')
  t.equal(factorOf([seconds(0.5)], 0, 1000, [1]), 1.5, 'faster than the reference: 2 probed')
  t.equal(factorOf([seconds(1)], 0, 1000, [1]), 1, 'at the reference')
  t.equal(factorOf([seconds(1), seconds(1)], 5000, 6000, [1, 1]), undefined, 'no timing in the interval')
})

test('watchSpeed: a speed once the references are fixed', async (t) => {
  const started = Date.now()
  const speed = watchSpeed(undefined, { everyMs: 50 })
  t.equal(speed.fix(), false, 'no reference before a second of timings')
  t.equal(speed.factor(started, Date.now()), undefined)
  while (!speed.fix() && Date.now() - started < 10_000) await sleep(100)
  const factor = speed.factor(started, Date.now())
  t.ok(factor > 0 && Number.isFinite(factor), `a speed (${factor})`)
  speed.stop()
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

test('a probe whose reader has gone ends quietly, as it does when its stdin ends', async (t) => {
  const probe = spawn(process.execPath, [fileURLToPath(new URL('../../bench/speed-probe.cjs', import.meta.url)), '10'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  probe.stderr.on('data', (chunk) => { stderr += chunk })
  // The parent that exits closes both pipes; the probe may write before it reads the end of stdin.
  probe.stdout.destroy()
  const timer = setTimeout(() => probe.kill(), 10_000)
  const [code] = await once(probe, 'exit')
  clearTimeout(timer)
  t.equal(code, 0, 'exit code')
  t.equal(stderr, '', 'nothing on stderr')
  probe.stdin.destroy()
})
