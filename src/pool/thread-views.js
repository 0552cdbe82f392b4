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

// Not among Piscina's exports: the file that defines it, beside the package's main file.
const piscinaWorkerInfo = () => require(join(dirname(require.resolve('piscina')), 'worker_pool/index.js')).WorkerInfo

// Makes `interface` return one view a thread, made on its first read. Returns whether it did: a
// Piscina whose threads have no such getter (a later version) is left as it is.
export function keepThreadViews (WorkerInfo = piscinaWorkerInfo()) {
  const { prototype } = WorkerInfo
  const get = Object.getOwnPropertyDescriptor(prototype, 'interface')?.get
  if (get === undefined) return false
  const views = new WeakMap()
  Object.defineProperty(prototype, 'interface', {
    configurable: true,
    get () {
      let view = views.get(this)
      if (view === undefined) views.set(this, view = get.call(this))
      return view
    }
  })
  return true
}
