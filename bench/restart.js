// One-off: the CPU a Piscina thread replacement takes. A running fib(27) is aborted, which
// terminates its thread; the process's CPU over the next second, less an idle second's, is the
// new thread's start (and the old one's end). Five times; an abort that found the task done
// replaces nothing and reads about 0.
//   node bench/restart.js
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'

const pool = new Piscina({
  filename: fileURLToPath(new URL('../workers/fib.js', import.meta.url)),
  minThreads: 2,
  maxThreads: 2,
  idleTimeout: Infinity,
  atomics: 'disabled'
})
for (let i = 0; i < 200; i++) await Promise.all([pool.run({ num: 22 }), pool.run({ num: 22 })])
const cpuMs = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000 }
await sleep(300)
let before = cpuMs()
await sleep(1000)
const idleMs = cpuMs() - before
for (let k = 0; k < 5; k++) {
  const cancel = new AbortController()
  const running = pool.run({ num: 27 }, { signal: cancel.signal }).catch(() => {})
  await sleep(0.5)
  before = cpuMs()
  cancel.abort()
  await running
  await sleep(1000)
  console.log(`replacement ${k + 1}: ${(cpuMs() - before - idleMs).toFixed(1)} ms of CPU`)
}
await pool.close()
