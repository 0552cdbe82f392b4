// How many CPUs this process may really use: the affinity mask, capped by its cgroup's CPU quota.
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join } from 'node:path'

// A file's text, or undefined when it cannot be read. Nothing here minds a trailing newline:
// Number() ignores it, and the empty last line of /proc/self/cgroup names no controller.
const read = (path) => {
  try {
    return readFileSync(path, 'utf8')
  } catch {}
}

// The cgroup's directory and its ancestors, as far as this mount shows them. Inside a container
// the mount often shows only the container's own cgroup, so the mount root is tried last.
function * cgroupDirs (mount, path) {
  for (let dir = path; dir !== '/'; dir = dirname(dir)) yield join(mount, dir)
  yield mount
}

// Limits on ancestors apply too: the tightest quota found wins (Infinity: none).
const tightest = (quotas) => Math.min(...quotas)

// A quota in CPUs, or Infinity when there is none or it cannot be read (no period, "max", -1).
const cpusOf = (quota, period) => (quota > 0 && period > 0 ? quota / period : Infinity)

// CPUs allowed by cgroup v2 `cpu.max` ("max 100000" or "200000 100000").
function v2Quota (mount, path) {
  return tightest([...cgroupDirs(mount, path)].map((dir) => {
    const [quota, period] = read(join(dir, 'cpu.max'))?.split(' ') ?? []
    return cpusOf(Number(quota), Number(period))
  }))
}

// CPUs allowed by cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (quota -1: unlimited).
function v1Quota (mount, path) {
  return tightest([...cgroupDirs(mount, path)].map((dir) => {
    return cpusOf(Number(read(join(dir, 'cpu.cfs_quota_us'))), Number(read(join(dir, 'cpu.cfs_period_us'))))
  }))
}

// Returns { cpus, source }: min(availableParallelism, floor(quota)), never below 1.
// `root` and `procSelfCgroup` are parameters so that tests can point them at fake trees.
export function availableCpus ({ root = '/sys/fs/cgroup', procSelfCgroup = '/proc/self/cgroup', parallelism = availableParallelism() } = {}) {
  const lines = (read(procSelfCgroup) ?? '').split('\n').map((line) => line.split(':'))
  // cgroup v1 names the cpu controller; on a hybrid host it wins over the unified line.
  const v1 = lines.find(([, controllers]) => controllers?.split(',').includes('cpu'))
  const v2 = lines.find(([id, controllers]) => id === '0' && controllers === '')
  let quota
  let source
  if (v1 !== undefined) {
    quota = v1Quota(join(root, 'cpu'), v1[2])
    source = 'cgroup v1 cpu.cfs_quota_us'
  } else if (v2 !== undefined) {
    quota = v2Quota(root, v2[2])
    source = 'cgroup v2 cpu.max'
  }
  if (quota === undefined || Math.floor(quota) >= parallelism) return { cpus: parallelism, source: 'availableParallelism' }
  return { cpus: Math.max(1, Math.floor(quota)), source }
}
