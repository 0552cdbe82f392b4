// node bench/signals.js: what a task's cancellation costs the main thread, the way the pool did it
// (AbortSignal.timeout for the deadline, AbortSignal.any with the client's signal) against the way
// it does now (one AbortController, a setTimeout cleared when the task settles). Each task, as in
// the pool: its cancellation is built, a listener added to it and removed, and the task settles.
// The deadline is REQUEST_TIMEOUT_MS's default, 30 s: an AbortSignal.timeout() cannot be cleared,
// so every one stays pending that long, as it did in the service (about 18,000 at 600 tasks/s).
// Rounds alternate the two ways; a pause between them lets the event loop run.
import { setImmediate as yieldToLoop } from 'node:timers/promises'

const TASKS = Number(process.env.TASKS || 50_000)
const ROUNDS = 3
const DEADLINE_MS = 30_000
const onAbort = () => {}

const WAYS = {
  'AbortSignal.timeout + AbortSignal.any': (client) => {
    const cancel = AbortSignal.any([AbortSignal.timeout(DEADLINE_MS), client.signal])
    cancel.addEventListener('abort', onAbort)
    cancel.removeEventListener('abort', onAbort)
  },
  'AbortController + cleared setTimeout': (client) => {
    const controller = new AbortController()
    const gone = () => controller.abort(client.signal.reason)
    const timer = setTimeout(() => controller.abort(), DEADLINE_MS)
    client.signal.addEventListener('abort', gone)
    controller.signal.addEventListener('abort', onAbort)
    controller.signal.removeEventListener('abort', onAbort)
    clearTimeout(timer)
    client.signal.removeEventListener('abort', gone)
  }
}

const results = Object.fromEntries(Object.keys(WAYS).map((name) => [name, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, task] of Object.entries(WAYS)) {
    const started = performance.now()
    for (let i = 0; i < TASKS; i++) {
      // The request's own signal, as Fastify makes one for each request that asks for it.
      task(new AbortController())
      if (i % 1000 === 0) await yieldToLoop()
    }
    results[name].push((performance.now() - started) * 1000 / TASKS)
  }
}
for (const [name, us] of Object.entries(results)) {
  console.log(`${name.padEnd(40)} ${us.map((x) => x.toFixed(2)).join(', ')} us a task`)
}
