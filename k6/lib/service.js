// What the k6 scripts share: where the service is, and how to read its answers.
import { sleep } from 'k6'

export const BASE_URL = __ENV.BASE_URL || 'http://localhost:3000'

// One unlabelled sample of the service's Prometheus exposition, e.g. metric(body, 'fib_pool_threads').
export function metric (text, name) {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.split(' ')[1])
}

// A response's JSON body, or {} when it has none (a check then fails on its fields, not on a throw).
export function json (res) {
  try {
    return res.json()
  } catch {
    return {}
  }
}

// Sleeps until the given time (ms since the epoch); at once if it has passed.
export const sleepUntil = (ms) => sleep(Math.max(0, ms - Date.now()) / 1000)
