// Keeps one process.nextTick queue entry alive for the life of the process, so that later entries
// keep the object shapes V8 first gave the entries and nextTick stays on its fast path.
//
// Why: Node calls process.nextTick about seven times a request (streams, HTTP). Each call builds
// its queue entry from an object literal whose keys V8 defines one at a time, through inline
// caches that remember one shape each and, seeing a second, turn megamorphic for good (these
// caches have no polymorphic state). V8 holds the shapes between an entry's keys weakly: a full
// garbage collection at a moment when no entry is alive (start-up, with its imports and its
// listen(), has such moments) drops them, the next entry gets new ones, and from then on every
// entry defines its keys in V8's runtime. Measured at fib(10): 7-9% of the main thread, about 13%
// of requests a second. One entry held here keeps the shapes alive: src/server.js imports this
// module first, before a collection can run.
import { executionAsyncResource } from 'node:async_hooks'

// The entry itself: inside a nextTick callback, the current async resource is its queue entry.
export let tickEntry
process.nextTick(() => { tickEntry = executionAsyncResource() })
