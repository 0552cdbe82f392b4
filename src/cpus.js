// How many CPUs this process may really use: the affinity mask, capped by its cgroup's CPU quota.
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { controllerOf, read, tightest } from './cgroup.js'

// A quota in CPUs, or Infinity when there is none or it cannot be read (no period, "max", -1).
const cpusOf = (quota, period) => (quota > 0 && period > 0 ? quota / period : Infinity)

// CPUs allowed by cgroup v2 `cpu.max` ("max 100000" or "200000 100000").
function v2Quota (dir) {
  const [quota, period] = read(join(dir, 'cpu.max'))?.split(' ') ?? []
  return cpusOf(Number(quota), Number(period))
}

// CPUs allowed by cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (quota -1: unlimited).
function v1Quota (dir) {
  return cpusOf(Number(read(join(dir, 'cpu.cfs_quota_us'))), Number(read(join(dir, 'cpu.cfs_period_us'))))
}

// Returns { cpus, source }: min(availableParallelism, floor(quota)), never below 1.
// `root` and `procSelfCgroup` are parameters so that tests can point them at fake trees.
export function availableCpus ({ root = '/sys/fs/cgroup', procSelfCgroup = '/proc/self/cgroup', parallelism = availableParallelism() } = {}) {
  const cgroup = controllerOf('cpu', { root, procSelfCgroup })
  const quota = cgroup && tightest(cgroup, cgroup.version === 1 ? v1Quota : v2Quota)
  if (quota === undefined || Math.floor(quota) >= parallelism) return { cpus: parallelism, source: 'availableParallelism' }
  return { cpus: Math.max(1, Math.floor(quota)), source: cgroup.version === 1 ? 'cgroup v1 cpu.cfs_quota_us' : 'cgroup v2 cpu.max' }
}
