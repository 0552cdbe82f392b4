// Reading this process's cgroup (v1 or v2): where its controller's files are, and the limits set
// on it or on any ancestor the mount shows. Used for the CPU quota (cpus.js) and the memory limit
// (memory.js).
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

// A file's text, or undefined when it cannot be read. Nothing here minds a trailing newline:
// Number() ignores it, and the empty last line of /proc/self/cgroup names no controller.
export const read = (path) => {
  try {
    return readFileSync(path, 'utf8')
  } catch {}
}

// The cgroup's directory and its ancestors, as far as this mount shows them. Inside a container
// the mount often shows only the container's own cgroup, so the mount root is tried last.
export function * cgroupDirs (mount, path) {
  for (let dir = path; dir !== '/'; dir = dirname(dir)) yield join(mount, dir)
  yield mount
}

// Where the files of `controller` are for this process: { version: 1, mount, path } when cgroup
// v1 names the controller (on a hybrid host it wins over the unified line), { version: 2, ... }
// on the unified hierarchy, undefined when neither is there.
export function controllerOf (controller, { root, procSelfCgroup }) {
  const lines = (read(procSelfCgroup) ?? '').split('\n').map((line) => line.split(':'))
  const v1 = lines.find(([, controllers]) => controllers?.split(',').includes(controller))
  if (v1 !== undefined) return { version: 1, mount: join(root, controller), path: v1[2] }
  const v2 = lines.find(([id, controllers]) => id === '0' && controllers === '')
  if (v2 !== undefined) return { version: 2, mount: root, path: v2[2] }
}

// The tightest of the limits `limitIn(dir)` reads along the cgroup's directories (Infinity: none).
export function tightest ({ mount, path }, limitIn) {
  return Math.min(...[...cgroupDirs(mount, path)].map(limitIn))
}
