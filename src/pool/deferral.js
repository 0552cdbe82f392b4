// Which waiting task starts next. The queue's order (queue.js) goes first, except for tasks that
// can no longer be answered in time: a task that would end past DEFER_TARGET of the recent tail
// even if it started now (its wait so far plus its predicted compute) gives way to the first task
// in order that still can. The tail is the 99th percentile of the latencies first come, first
// served would have given the last DEFER_WINDOW arrivals (their predicted wait plus compute).
// A task held back that way is never held past DEFER_BOUND times the latency first come, first
// served would have given it: once it would start past that (within DEFER_MARGIN of the compute of
// the task about to start instead), it starts first.
//
// The overall p99 is set by the tasks that miss it. Started in order, a task already late would
// be answered late anyway, and the tasks behind it would miss too; started after those, it is
// answered later still, but they are answered in time. With the allowances capped by the recent
// tail (index.js), the order alone is close to first come, first served, and deferral gives the
// small tasks their lead: on the tasks of the tail cap's report runs (bench/orders.js, 20 traces a
// load), the overall p99 read 0.89x, 0.79x and 0.75x first come, first served's at 70, 80 and 90%
// of C on the big mix against 0.98x, 0.95x and 0.89x without it, and 0.95x, 0.81x and 0.80x
// against 1.04x, 1.00x and 1.00x on the default; the smallest class's 0.52x, 0.38x and 0.36x
// against 0.70-0.71x, and 0.68x, 0.50x and 0.48x against 0.78-0.81x.

// A task is held back once it would end past this share of the recent p99.
export const DEFER_TARGET = 0.8
// The arrivals whose p99 is the recent one, and how often it is computed again.
export const DEFER_WINDOW = 4000
export const DEFER_EVERY = 200
// A task held back starts first once it would start past this many times the latency first come,
// first served would have given it. On the tasks of the tail cap's report runs (bench/orders.js),
// fib(35)'s p99 read 1.77x and 1.66x first come, first served's at 80 and 90% of C on the default
// mix with 1.6, against 1.85x and 1.77x with 1.7, and fib(34)'s 1.49x and 1.59x against 1.55x and
// 1.64x on the big, the overall p99 within 0.01 of 1.7's up to 90%; 1.5 read 0.84x and 0.92x
// overall on the default mix at 90 and 95% against 0.80x and 0.88x.
const DEFER_BOUND = 1.6
const DEFER_MARGIN = 0.5

// How long after its arrival a task of `costMs` that first come, first served would start in
// `waitMs` may be held back.
export const deferByMs = (costMs, waitMs) => DEFER_BOUND * (waitMs + costMs) - costMs

// Of the waiting `entries` (queue.js, in start order; each item with its `admitted`, `costMs` and
// `deferBy`), the one to start at `now` with a recent p99 of `p99Ms`.
export function nextToStart (entries, now, p99Ms) {
  // No recent tail (deferral off, or too few arrivals yet): the queue's order alone, unscanned.
  if (p99Ms === Infinity) return entries[Symbol.iterator]().next().value
  const targetMs = DEFER_TARGET * p99Ms
  let first
  let inTime
  let longestHeld
  for (const entry of entries) {
    first ??= entry
    const job = entry.item
    if (inTime === undefined && (now - job.admitted + job.costMs <= targetMs || job.costMs > targetMs)) inTime = entry
    if (longestHeld === undefined || job.deferBy < longestHeld.item.deferBy) longestHeld = entry
  }
  const chosen = inTime ?? first
  if (chosen === undefined) return undefined
  return longestHeld.item.deferBy < now + DEFER_MARGIN * chosen.item.costMs ? longestHeld : chosen
}
