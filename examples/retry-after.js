// A client of the service that honours Retry-After: a 503 (QUEUE_FULL, UNDER_PRESSURE,
// SHUTTING_DOWN) is retried after the seconds the service asked for, plus up to half again at
// random, so that clients refused together do not come back together. GET /fib is idempotent,
// so a retry is always safe; any other status is returned as it is.
import { setTimeout as sleep } from 'node:timers/promises'

export async function getWithRetry (url, { attempts = 3, maxWaitSeconds = 10 } = {}) {
  for (let attempt = 1; attempt < attempts; attempt++) {
    const res = await fetch(url)
    if (res.status !== 503) return res
    const seconds = Number(res.headers.get('retry-after') ?? 1)
    // A wait longer than the caller will give is not worth starting: report the 503 now.
    if (!(seconds >= 0) || seconds > maxWaitSeconds) return res
    await res.arrayBuffer()
    await sleep(seconds * 1000 * (1 + Math.random() / 2))
  }
  return fetch(url)
}
