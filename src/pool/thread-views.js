// One view of each Piscina thread, kept for the thread's life, in place of a new one per run().
//
// Piscina 5.3 builds `workerInfo.interface`, what its load balancer and its workerCreate events
// see of a thread, afresh on every read: an object of seven getters over the thread's state, and
// run() reads it for every ready thread. Those objects end in the old space: Fastify + Piscina
// leaves about 1 kB a request there, and each scavenge that copies it pauses the main thread for
// 7 ms instead of 0.3 (bench/promotion.js). The getters read the thread's state when called, so
// one view a thread tells the balancer the same.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)

// Piscina's class of threads, from the file that defines it beside the package's main file (it is
// not among Piscina's exports); undefined when a later version has no such file.
export function piscinaWorkerInfo (main = require.resolve('piscina')) {
  try {
    return require(join(dirname(main), 'worker_pool/index.js')).WorkerInfo
  } catch {
    return undefined
  }
}

// Makes `interface` return one view a thread, made on its first read. Returns whether it did:
// Piscina is left as it is when its threads' class, or the getter, is not there.
export function keepThreadViews (WorkerInfo) {
  const get = WorkerInfo && Object.getOwnPropertyDescriptor(WorkerInfo.prototype, 'interface')?.get
  if (get === undefined) return false
  const views = new WeakMap()
  Object.defineProperty(WorkerInfo.prototype, 'interface', {
    configurable: true,
    get () {
      let view = views.get(this)
      if (view === undefined) views.set(this, view = get.call(this))
      return view
    }
  })
  return true
}
