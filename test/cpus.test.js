import { test } from 'tap'
import { availableCpus } from '../src/cpus.js'
import { fakeTree } from './helper.js'

// What availableCpus answers for that fake tree, on a machine of `parallelism` CPUs.
const cpusFor = (t, procSelfCgroup, files, parallelism) => availableCpus({ ...fakeTree(t, procSelfCgroup, files), parallelism })

const V2 = '0::/app.slice/api.scope\n'
const V1 = '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n'

test('cgroup v2: cpu.max caps the affinity, floored', async (t) => {
  t.same(cpusFor(t, V2, { 'app.slice/api.scope/cpu.max': '200000 100000' }, 64), { cpus: 2, source: 'cgroup v2 cpu.max' })
})

test('cgroup v2: an ancestor\'s tighter quota wins', async (t) => {
  t.same(cpusFor(t, V2, { 'app.slice/api.scope/cpu.max': 'max 100000', 'app.slice/cpu.max': '300000 100000' }, 64), { cpus: 3, source: 'cgroup v2 cpu.max' })
})

test('cgroup v2 inside a container: the mount root is the container\'s own cgroup', async (t) => {
  t.same(cpusFor(t, V2, { 'cpu.max': '400000 100000' }, 64), { cpus: 4, source: 'cgroup v2 cpu.max' })
})

test('cgroup v1: cfs_quota_us / cfs_period_us', async (t) => {
  t.same(cpusFor(t, V1, { 'cpu/docker/abc/cpu.cfs_quota_us': '250000', 'cpu/docker/abc/cpu.cfs_period_us': '100000' }, 64), { cpus: 2, source: 'cgroup v1 cpu.cfs_quota_us' })
})

test('cgroup v1 inside a container, and a quota of -1 higher up meaning unlimited', async (t) => {
  t.same(cpusFor(t, V1, { 'cpu/cpu.cfs_quota_us': '150000', 'cpu/cpu.cfs_period_us': '100000' }, 8), { cpus: 1, source: 'cgroup v1 cpu.cfs_quota_us' }, '1.5 CPUs floor to 1')
  t.same(cpusFor(t, V1, { 'cpu/cpu.cfs_quota_us': '-1', 'cpu/cpu.cfs_period_us': '100000' }, 8), { cpus: 8, source: 'availableParallelism' }, 'unlimited')
})

test('no quota ("max"), or one above the affinity: the affinity stands', async (t) => {
  t.same(cpusFor(t, V2, { 'cpu.max': 'max 100000' }, 6), { cpus: 6, source: 'availableParallelism' }, 'no quota')
  t.same(cpusFor(t, V2, { 'cpu.max': '1600000 100000' }, 6), { cpus: 6, source: 'availableParallelism' }, 'above the affinity')
})

test('a quota below one CPU still gives one thread', async (t) => {
  t.same(cpusFor(t, V2, { 'cpu.max': '50000 100000' }, 4), { cpus: 1, source: 'cgroup v2 cpu.max' })
})

test('unreadable or unknown cgroup files fall back to the affinity', async (t) => {
  t.same(availableCpus({ root: '/nonexistent', procSelfCgroup: '/nonexistent/cgroup', parallelism: 3 }), { cpus: 3, source: 'availableParallelism' })
  t.same(cpusFor(t, V2, {}, 3), { cpus: 3, source: 'availableParallelism' }, 'no cpu.max')
  t.same(cpusFor(t, '3:memory:/x\n', {}, 3), { cpus: 3, source: 'availableParallelism' }, 'no cpu controller')
})

test('the tightest CPU quota in the cgroup ancestry wins, wherever it is set', async (t) => {
  t.same(cpusFor(t, V2, { 'app.slice/api.scope/cpu.max': '400000 100000', 'app.slice/cpu.max': '300000 100000' }, 64), { cpus: 3, source: 'cgroup v2 cpu.max' }, 'the outer one tighter')
  t.same(cpusFor(t, V2, { 'app.slice/api.scope/cpu.max': '200000 100000', 'app.slice/cpu.max': '500000 100000' }, 64), { cpus: 2, source: 'cgroup v2 cpu.max' }, 'the inner one tighter')
  t.same(cpusFor(t, V1, {
    'cpu/docker/abc/cpu.cfs_quota_us': '600000',
    'cpu/docker/abc/cpu.cfs_period_us': '100000',
    'cpu/docker/cpu.cfs_quota_us': '300000',
    'cpu/docker/cpu.cfs_period_us': '100000'
  }, 64), { cpus: 3, source: 'cgroup v1 cpu.cfs_quota_us' })
})

test('a quota without its period is no quota: the affinity stands', async (t) => {
  t.same(cpusFor(t, V1, { 'cpu/docker/abc/cpu.cfs_quota_us': '100000' }, 4), { cpus: 4, source: 'availableParallelism' }, 'cgroup v1')
  t.same(cpusFor(t, V2, { 'cpu.max': '100000' }, 4), { cpus: 4, source: 'availableParallelism' }, 'cgroup v2')
})

test('a quota of exactly the affinity leaves the affinity as the source', async (t) => {
  t.same(cpusFor(t, V2, { 'cpu.max': '400000 100000' }, 4), { cpus: 4, source: 'availableParallelism' })
})

test('cgroup v2 is found on its own "0::" line, not on another controller\'s', async (t) => {
  t.same(cpusFor(t, '3:memory:/elsewhere\n0::/app.slice\n', { 'app.slice/cpu.max': '200000 100000', 'cpu.max': '500000 100000' }, 8), { cpus: 2, source: 'cgroup v2 cpu.max' })
})

test('on this machine the answer is between 1 and the affinity', async (t) => {
  const { cpus } = availableCpus()
  t.ok(cpus >= 1)
})
