// The dispatch of the pool baselines: each worker (child process or thread) is handed one task at
// a time (TASKS_PER_WORKER=2: up to two, the second waiting in its port until the first ends,
// handed to the worker holding fewer), the rest wait in a FIFO here. Among workers holding as few,
// the one freed last takes the task. `post(worker, { id, num })` sends a task; the baseline hands
// each answer ({ id, ...body }) to `answered(worker, answer)`. `compute` is serve's handler.
export function dispatcher (workers, post, perWorker = Number(process.env.TASKS_PER_WORKER || 1)) {
  const held = new Map(workers.map((worker) => [worker, 0]))
  // The workers in the order they were last freed, the latest last.
  const freed = [...workers]
  const queue = []
  const pending = new Map()
  let nextId = 0

  function dispatch (worker, { num, resolve }) {
    const id = nextId++
    pending.set(id, resolve)
    held.set(worker, held.get(worker) + 1)
    post(worker, { id, num })
  }

  // The worker holding the fewest tasks, if it may take one more; of several, the one freed last.
  function leastHeld () {
    let least
    for (let i = freed.length - 1; i >= 0; i--) {
      const tasks = held.get(freed[i])
      if (tasks < perWorker && (least === undefined || tasks < held.get(least))) least = freed[i]
    }
    return least
  }

  return {
    answered (worker, { id, ...out }) {
      pending.get(id)(out)
      pending.delete(id)
      held.set(worker, held.get(worker) - 1)
      const next = queue.shift()
      if (next) {
        dispatch(worker, next)
      } else {
        freed.splice(freed.indexOf(worker), 1)
        freed.push(worker)
      }
    },
    compute: (num) => new Promise((resolve) => {
      const worker = leastHeld()
      if (worker) dispatch(worker, { num, resolve })
      else queue.push({ num, resolve })
    })
  }
}
