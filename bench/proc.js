// The benchmark's servers as child processes: start, wait until they answer, measure, stop.
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
// The kernel's clock ticks, in which /proc counts CPU time.
const TICKS_PER_S = 100

// Stops the process with one line naming the first of `tools` ([command, how to install]) missing.
export function requireTools (tools) {
  for (const [tool, install] of tools) {
    if (spawnSync(tool, ['--version']).error) {
      console.error(`bench: ${tool} is not installed (${install})`)
      process.exit(1)
    }
  }
}

// The fields of a /proc stat file after the command name (which may hold spaces): state first.
function statFields (path) {
  const stat = readFileSync(path, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

// CPU time (user and system) in a /proc stat file, in ms.
function cpuMsOfStat (path) {
  const [utime, stime] = statFields(path).slice(11, 13).map(Number)
  return (utime + stime) * 1000 / TICKS_PER_S
}

// CPU time the main thread of process `pid` has used so far, in ms: the scheduler's own count
// (schedstat, in ns), where stat counts in 10 ms ticks, too coarse for a few thousand requests.
export function mainThreadCpuMs (pid) {
  return threadSchedMs(pid, pid)
}

// CPU time thread `tid` of process `pid` has used so far, in ms, as the scheduler counts it.
function threadSchedMs (pid, tid) {
  return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
}

// Which of a server's threads `tid` of process `pid` is: its main thread, one of its pool's threads,
// or a helper (V8's GC and compiler threads, libuv's pool). Node names its threads (MainThread,
// WorkerThread, V8Worker, ...).
function threadClass (pid, tid) {
  if (Number(tid) === pid) return 'main'
  return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'WorkerThread' ? 'pool' : 'helpers'
}

// CPU time each thread of a server of one process `pid` has used so far, in ms as the scheduler
// counts it, with its class (threadClass), by tid: { ms, of }. Empty when it has gone; a thread
// that ends meanwhile (a pool thread replaced after a cancellation) is left out.
const threadsCpuMs = (pid) => readThreads(pid, (tid) => ({ ms: threadSchedMs(pid, tid), of: threadClass(pid, tid) }))

// The CPU time of each class of `threads` (threadsCpuMs) since `before`, in ms: a thread that has
// ended since is left out, and one started since counts from none, as with switchesSince.
function cpuByClass (threads, before = new Map()) {
  const cpu = { main: 0, pool: 0, helpers: 0 }
  for (const [tid, { ms, of }] of threads) cpu[of] += ms - (before.get(tid)?.ms ?? 0)
  return cpu
}

// What cpuSince reads a window from: every live thread of `pid` (threadsCpuMs) and the process's
// whole CPU time, which keeps that of the threads that have ended.
export const cpuSnapshot = (pid) => ({ threads: threadsCpuMs(pid), totalMs: cpuMsOfStat(`/proc/${pid}/stat`) })

// The CPU time of each class of the threads of `pid` since `before` (cpuSnapshot), in ms. The main
// thread and the helpers never end; the pool's threads may (Piscina replaces the thread of a task
// cancelled as its client goes, as a load generator's connections close with answers owed), so
// theirs is the rest of the process's, whose count keeps an ended thread's time, to its 10 ms tick.
export function cpuSince (pid, before) {
  const { main, helpers } = cpuByClass(threadsCpuMs(pid), before.threads)
  return { main, helpers, pool: cpuMsOfStat(`/proc/${pid}/stat`) - before.totalMs - main - helpers }
}

// CPU time of each class of the threads of a server of one process `pid` so far, in ms as the
// scheduler counts it. Undefined when it has gone.
export function threadCpuMs (pid) {
  const threads = threadsCpuMs(pid)
  return threads.size === 0 ? undefined : cpuByClass(threads)
}

// Starts `server` ({ file, port, env, nodeArgs }) with THREADS=threads (the baselines' processes/children).
export function start (server, threads) {
  const child = spawn(process.execPath, [...(server.nodeArgs ?? []), join(ROOT, server.file)], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(server.port), THREADS: String(threads), ...server.env },
    stdio: 'ignore'
  })
  server.pid = child.pid
  server.child = child
}

export async function waitReady (server) {
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`http://127.0.0.1:${server.port}/health`).then((r) => r.ok, () => false)
    if (ok) return
    await sleep(100)
  }
  throw new Error(`${server.name} did not answer /health`)
}

// Stops with one line if `port` is taken: a server left from an interrupted run would answer
// /health for the one that could not bind, and be measured in its place.
async function requireFreePort (port) {
  const probe = createServer()
  await new Promise((resolve, reject) => probe.once('error', reject).listen(port, '127.0.0.1', resolve)).catch((err) => {
    console.error(`bench: port ${port} is taken (${err.code}); is a server of an earlier run still up?`)
    process.exit(1)
  })
  await new Promise((resolve) => probe.close(resolve))
}

// Starts every server, kills them all when this process exits, and waits until each answers.
export async function startAll (servers, threads) {
  for (const server of servers) await requireFreePort(server.port)
  for (const server of servers) start(server, threads)
  process.on('exit', () => { for (const server of servers) server.child.kill('SIGKILL') })
  // Interrupted, it exits (and so kills them) too: by default a signal ends Node without 'exit'.
  process.once('SIGINT', () => process.exit(130))
  process.once('SIGTERM', () => process.exit(143))
  await Promise.all(servers.map(waitReady))
}

// The pids of a server and all its descendant processes.
function processTree (rootPid) {
  const parent = new Map()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      parent.set(Number(entry), Number(statFields(`/proc/${entry}/stat`)[1]))
    } catch {}
  }
  const tree = []
  for (const pid of parent.keys()) {
    let p = pid
    while (p > 1 && p !== rootPid) p = parent.get(p) ?? 1
    if (p === rootPid) tree.push(pid)
  }
  return tree
}

// Resident memory of a server and all its descendant processes, in bytes.
export function rssOfTree (rootPid) {
  let total = 0
  for (const pid of processTree(rootPid)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1]) * 1024
    } catch {}
  }
  return total
}

// CPU time a server and all its descendant processes (every thread) have used so far, in ms.
export function cpuOfTreeMs (rootPid) {
  let total = 0
  for (const pid of processTree(rootPid)) {
    try {
      total += cpuMsOfStat(`/proc/${pid}/stat`)
    } catch {}
  }
  return total
}

// `read(tid)` for every thread of process `pid`, into `values` by `key(tid)`; a thread that ends
// meanwhile, or a process that has gone, is left out.
function readThreads (pid, read, values = new Map(), key = (tid) => tid) {
  let tids = []
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {}
  for (const tid of tids) {
    try {
      values.set(key(tid), read(tid))
    } catch {}
  }
  return values
}

// `read(pid, tid)` for every thread of a server and all its descendant processes, by
// "pid/tid"; a thread that ends meanwhile is left out.
function byThread (rootPid, read) {
  const values = new Map()
  for (const pid of processTree(rootPid)) readThreads(pid, (tid) => read(pid, tid), values, (tid) => `${pid}/${tid}`)
  return values
}

// The same as the scheduler counts it (schedstat, every thread): stat's 10 ms ticks, over a few
// threads, are a percent of a few hundred requests' CPU.
export const schedOfTreeMs = (rootPid) => [...byThread(rootPid, threadSchedMs).values()].reduce((sum, ms) => sum + ms, 0)

// Context switches of a server and all its descendant processes, by thread ("pid/tid"): each
// time a thread gave up its CPU to wait, and each time it was made to give it up.
export const switchesOfTree = (rootPid) => byThread(rootPid, (pid, tid) => {
  const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)[1]) + Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)[1])
})

// The context switches of a server's threads since `before` (switchesOfTree): those of a thread
// that has ended since are lost with it (Piscina replaces the thread of a cancelled task), and a
// thread started since counts from none.
export function switchesSince (rootPid, before) {
  let total = 0
  for (const [thread, switches] of switchesOfTree(rootPid)) total += switches - (before.get(thread) ?? 0)
  return total
}

// Waits (MAX_SETTLE_MS at most) until the process tree of `pid` has been idle for IDLE_STEP_MS,
// so that a server's work left over from a load run does not land on the next one: thread and
// fork per request go on with their backlog on both cores for a second or two after wrk stops,
// and past saturation a server without a bounded queue after k6 stops. A fall in the tree's CPU
// time means processes exited: not idle yet. Returns how long it waited, in ms.
const IDLE_STEP_MS = 200
const IDLE_SHARE = 0.1
const MAX_SETTLE_MS = 10_000
export async function settle (pid) {
  for (let waited = 0; waited < MAX_SETTLE_MS; waited += IDLE_STEP_MS) {
    const before = cpuOfTreeMs(pid)
    await sleep(IDLE_STEP_MS)
    const used = cpuOfTreeMs(pid) - before
    if (used >= 0 && used < IDLE_SHARE * IDLE_STEP_MS) return waited
  }
  return MAX_SETTLE_MS
}

// The machine's CPU time so far, in ms summed over its CPUs: all of it, busy (this machine's
// own work: everything but idle, I/O wait and steal), and stolen by the hypervisor for other guests.
export function machineCpuMs () {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number)
  const ms = (ticks) => ticks * 1000 / TICKS_PER_S
  return { busy: ms(user + nice + system + irq + softirq), total: ms(user + nice + system + idle + iowait + irq + softirq + steal), steal: ms(steal) }
}
