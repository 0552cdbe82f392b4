// How much memory this process may use before the kernel kills it: its cgroup's memory limit.
import { totalmem } from 'node:os'
import { join } from 'node:path'
import { controllerOf, read, tightest } from './cgroup.js'

// A limit in bytes, or Infinity for none: v2 writes "max", v1 a huge number (9223372036854771712)
// when unlimited; a limit at or above the machine's memory limits nothing either.
const bytesOf = (text, machine) => {
  const bytes = Number(text)
  return bytes > 0 && bytes < machine ? bytes : Infinity
}

// Returns { bytes, source } for the tightest memory limit on this process's cgroup (v2
// `memory.max`, v1 `memory.limit_in_bytes`), or undefined when none is set. `root`,
// `procSelfCgroup` and `machine` (bytes of memory) are parameters so that tests can fake them.
export function memoryLimit ({ root = '/sys/fs/cgroup', procSelfCgroup = '/proc/self/cgroup', machine = totalmem() } = {}) {
  const cgroup = controllerOf('memory', { root, procSelfCgroup })
  if (cgroup === undefined) return undefined
  const file = cgroup.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'
  const bytes = tightest(cgroup, (dir) => bytesOf(read(join(dir, file)), machine))
  return bytes === Infinity ? undefined : { bytes, source: `cgroup v${cgroup.version} ${file}` }
}
