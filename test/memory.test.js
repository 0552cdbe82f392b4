import { test } from 'tap'
import { memoryLimit } from '../src/memory.js'
import { fakeTree } from './helper.js'

const GIB = 2 ** 30
// What memoryLimit answers for a fake tree, on a machine of 24 GiB.
const limitFor = (t, procSelfCgroup, files) => memoryLimit({ ...fakeTree(t, procSelfCgroup, files), machine: 24 * GIB })

const V2 = '0::/app.slice/api.scope\n'
const V1 = '12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n'

test('cgroup v2: memory.max is the limit', async (t) => {
  t.same(limitFor(t, V2, { 'app.slice/api.scope/memory.max': String(512 * 2 ** 20) }), { bytes: 512 * 2 ** 20, source: 'cgroup v2 memory.max' })
})

test('cgroup v2: "max" is no limit, and an ancestor\'s limit applies', async (t) => {
  t.equal(limitFor(t, V2, { 'app.slice/api.scope/memory.max': 'max' }), undefined)
  t.same(limitFor(t, V2, { 'app.slice/api.scope/memory.max': 'max', 'app.slice/memory.max': String(GIB) }), { bytes: GIB, source: 'cgroup v2 memory.max' })
})

test('cgroup v2 inside a container: the mount root is the container\'s own cgroup', async (t) => {
  t.same(limitFor(t, V2, { 'memory.max': String(2 * GIB) }), { bytes: 2 * GIB, source: 'cgroup v2 memory.max' })
})

test('cgroup v1: memory.limit_in_bytes; its "unlimited" (a huge number) is no limit', async (t) => {
  t.same(limitFor(t, V1, { 'memory/docker/abc/memory.limit_in_bytes': String(GIB) }), { bytes: GIB, source: 'cgroup v1 memory.limit_in_bytes' })
  t.equal(limitFor(t, V1, { 'memory/docker/abc/memory.limit_in_bytes': '9223372036854771712' }), undefined)
})

test('a limit at or above the machine\'s memory limits nothing', async (t) => {
  t.equal(limitFor(t, V2, { 'memory.max': String(24 * GIB) }), undefined)
  t.same(limitFor(t, V2, { 'memory.max': String(24 * GIB - 1) }), { bytes: 24 * GIB - 1, source: 'cgroup v2 memory.max' })
})

test('no cgroup file, or no cgroup at all: no limit', async (t) => {
  t.equal(limitFor(t, V2, {}), undefined)
  t.equal(limitFor(t, '', {}), undefined)
  t.equal(limitFor(t, V2, { 'memory.max': 'garbage' }), undefined)
})
