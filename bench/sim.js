// A queueing model of the open-loop run, as a reference for what each policy can reach on this
// machine: tasks drawn as k6 draws them (bench/k6/mix.js), evenly spaced at the same rate as k6's
// constant-arrival-rate spaces them, at the measured compute times, on `threads` servers.
// A model, not a measurement: it knows every task's size exactly and has no hand-off cost.
//   per-process: each server its own first-come-first-served queue, dealt round-robin (cluster)
//   shared:      one first-come-first-served queue for all servers (a plain pool)
//   cheapest:    one queue, cheapest first (the service's order, without its starvation bound)
import { mixSequence } from './k6/mix.js'

// `classes`: [[num, ms, share], ...]; `load`: offered work over the threads' capacity.
// Returns { p99, smallP99 } in ms (small: the first class).
export function simulate (policy, load, classes, threads, tasks = 200_000) {
  const numAt = mixSequence(classes.map(([num, , share]) => [num, share]))
  const msOf = new Map(classes.map(([num, ms]) => [num, ms]))
  const meanMs = classes.reduce((sum, [, ms, share]) => sum + ms * share, 0)
  const rate = load * threads / meanMs
  const jobs = []
  for (let i = 0; i < tasks; i++) {
    const num = numAt(i)
    jobs.push({ arrival: i / rate, ms: msOf.get(num), small: num === classes[0][0] })
  }
  const latency = []
  const small = []
  const done = (job, end) => {
    latency.push(end - job.arrival)
    if (job.small) small.push(end - job.arrival)
  }
  if (policy === 'per-process') {
    const free = new Array(threads).fill(0)
    jobs.forEach((job, i) => {
      const k = i % threads
      free[k] = Math.max(free[k], job.arrival) + job.ms
      done(job, free[k])
    })
  } else {
    const free = new Array(threads).fill(0)
    const queue = []
    let i = 0
    while (i < jobs.length || queue.length > 0) {
      const at = Math.min(...free)
      const k = free.indexOf(at)
      while (i < jobs.length && (jobs[i].arrival <= at || queue.length === 0)) queue.push(jobs[i++])
      let pick = 0
      if (policy === 'cheapest') for (let m = 1; m < queue.length; m++) if (queue[m].ms < queue[pick].ms) pick = m
      const [job] = queue.splice(pick, 1)
      free[k] = Math.max(at, job.arrival) + job.ms
      done(job, free[k])
    }
  }
  const p99 = (values) => values.sort((a, b) => a - b)[Math.floor(0.99 * (values.length - 1))]
  return { p99: p99(latency), smallP99: p99(small) }
}
