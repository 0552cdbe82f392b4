// The dispatch of the pool baselines: each worker (child process or thread) is handed one task at
// a time (TASKS_PER_WORKER=2: up to two, the second waiting in its port until the first ends,
// handed to the worker holding fewer), the rest wait in a FIFO here. `post(worker, { id, num })`
// sends a task; the baseline hands each answer ({ id, ...body }) to `answered(worker, answer)`.
// `compute` is serve's handler.
export function dispatcher (workers, post, perWorker = Number(process.env.TASKS_PER_WORKER || 1)) {
  const held = new Map(workers.map((worker) => [worker, 0]))
  const queue = []
  const pending = new Map()
  let nextId = 0

  function dispatch (worker, { num, resolve }) {
    const id = nextId++
    pending.set(id, resolve)
    held.set(worker, held.get(worker) + 1)
    post(worker, { id, num })
  }

  // The worker holding the fewest tasks, if it may take one more.
  function leastHeld () {
    let least
    for (const [worker, tasks] of held) {
      if (tasks < perWorker && (least === undefined || tasks < held.get(least))) least = worker
    }
    return least
  }

  return {
    answered (worker, { id, ...out }) {
      pending.get(id)(out)
      pending.delete(id)
      held.set(worker, held.get(worker) - 1)
      const next = queue.shift()
      if (next) dispatch(worker, next)
    },
    compute: (num) => new Promise((resolve) => {
      const worker = leastHeld()
      if (worker) dispatch(worker, { num, resolve })
      else queue.push({ num, resolve })
    })
  }
}
