// How fast each CPU runs while the benchmark measures. On a shared host a CPU can compute 1.5-2x
// slower for seconds at a time, with no steal time to show it (other tenants on the same physical
// core or cache), and a load fixed for a while offers a higher share of it then. One probe a CPU
// (speed-probe.cjs, pinned with taskset) times the same small computation several times a second,
// uninterrupted. A CPU's slowdown over an interval is the median of its timings there over its
// fastest second so far; the machine's, the largest over the CPUs. Its speed (`factor`) is what
// the open loop keeps its load by: each CPU's reference time over its median in the interval,
// averaged over the CPUs, with half of its distance from 1 (PROBED_SHARE): the share of the
// reference's compute the machine then does.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { median } from './stats.js'

const PROBE = fileURLToPath(new URL('./speed-probe.cjs', import.meta.url))
// A second's timings count towards a CPU's fastest only when there are at least this many.
const MIN_TIMINGS_A_SECOND = 3
// The share of the probes' change in speed that the machine's throughput follows. Second by
// second, threads computing moved by half of what the probes read: a fitted slope of 0.46 and
// 0.61 for two threads computing alone, 0.51 for a server's closed-loop work with its client, the
// probes swinging 0.74-1.43 of the reference. Followed whole, the open loop's rate swung twice as
// far as what the machine could do, and its load with it.
export const PROBED_SHARE = 0.5

// The CPUs this process may run on, from the kernel's list in /proc/self/status ("0-3,6").
export function allowedCpus (status = readFileSync('/proc/self/status', 'utf8')) {
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)[1]
  return list.split(',').flatMap((range) => {
    const [first, last = first] = range.split('-').map(Number)
    return Array.from({ length: last - first + 1 }, (_, i) => first + i)
  })
}

// The median of each whole second's timings ([[epoch ms, ms], ...]), the lowest.
export function fastestSecond (timings) {
  const seconds = new Map()
  for (const [at, ms] of timings) {
    const second = Math.floor(at / 1000)
    if (!seconds.has(second)) seconds.set(second, [])
    seconds.get(second).push(ms)
  }
  const medians = [...seconds.values()].filter((ms) => ms.length >= MIN_TIMINGS_A_SECOND).map(median)
  return medians.length === 0 ? undefined : Math.min(...medians)
}

// The timings ([[epoch ms, ms], ...], in time order, as a probe prints them) from `fromMs` to
// `toMs`: found by bisection, since the open loop reads the last half second of a run's tens of
// thousands ten times a second.
export function timingsWithin (timings, fromMs, toMs) {
  const first = (ms) => {
    let low = 0
    let high = timings.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (timings[mid][0] < ms) low = mid + 1
      else high = mid
    }
    return low
  }
  return timings.slice(first(fromMs), first(toMs)).map(([, ms]) => ms)
}

// The machine's slowdown from `fromMs` to `toMs` (epoch ms), given each CPU's timings: undefined
// when a CPU has none there or no fastest second yet.
export function slowdownOf (timingsByCpu, fromMs, toMs) {
  let worst = 0
  for (const timings of timingsByCpu) {
    const inside = timingsWithin(timings, fromMs, toMs)
    const fastest = fastestSecond(timings)
    if (inside.length === 0 || fastest === undefined) return undefined
    worst = Math.max(worst, median(inside) / fastest)
  }
  return worst
}

// The machine's speed from `fromMs` to `toMs` against `references` (each CPU's reference time,
// ms): the mean over the CPUs of reference over median timing there, moved towards 1 by the share
// the machine does not follow (PROBED_SHARE). 1 is every CPU at its reference; below 1 slower,
// over 1 faster. Undefined when a CPU has no timing there.
export function factorOf (timingsByCpu, fromMs, toMs, references) {
  let sum = 0
  for (const [i, timings] of timingsByCpu.entries()) {
    const inside = timingsWithin(timings, fromMs, toMs)
    if (inside.length === 0) return undefined
    sum += references[i] / median(inside)
  }
  return 1 + PROBED_SHARE * (sum / timingsByCpu.length - 1)
}

// Starts a probe on each of `cpus`, timing every `everyMs`; `slowdown(fromMs, toMs)` reads the
// machine's over that interval from the timings so far; `fix()` takes each CPU's fastest second
// so far as its reference for good (false if a CPU has none yet), and `factor(fromMs, toMs)` the
// speed against it (factorOf); `stop()` ends the probes (they also end with this process).
export function watchSpeed (cpus = allowedCpus(), { everyMs = 200 } = {}) {
  const timingsByCpu = cpus.map(() => [])
  const probes = cpus.map((cpu, i) => {
    const probe = spawn('taskset', ['-c', String(cpu), process.execPath, PROBE, String(everyMs)], { stdio: ['pipe', 'pipe', 'inherit'] })
    createInterface({ input: probe.stdout }).on('line', (line) => timingsByCpu[i].push(line.split(' ').map(Number)))
    return probe
  })
  let references
  return {
    slowdown: (fromMs, toMs) => slowdownOf(timingsByCpu, fromMs, toMs),
    fix () {
      const fastest = timingsByCpu.map(fastestSecond)
      if (fastest.includes(undefined)) return false
      references = fastest
      return true
    },
    factor: (fromMs, toMs) => (references === undefined ? undefined : factorOf(timingsByCpu, fromMs, toMs, references)),
    stop: () => probes.forEach((probe) => probe.stdin.end())
  }
}
