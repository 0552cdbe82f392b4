// Piscina's load balancer for POOL_TASKS_PER_THREAD=2.
//
// Piscina puts at most one task that carries a signal on a thread, so a thread that finishes a
// task idles until the main thread has taken the result and handed it the next one. This
// balancer lets a second task wait on a busy thread (only when no thread is idle), so the thread
// starts it the moment the first ends: +14% throughput at fib(27) on 2 threads (bench/README.md).
export function twoPerThread (task, workers) {
  let busyWithOne = null
  for (const worker of workers) {
    if (worker.currentUsage === 0) return worker
    if (busyWithOne === null && worker.isRunningAbortableTask) busyWithOne = worker
  }
  return busyWithOne
}
