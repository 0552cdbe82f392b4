// Preloaded (--import) into a server by bench/promotion.js: SIGWINCH opens a window on the main
// thread's garbage collections (v8.GCProfiler), the next SIGWINCH closes it and writes what it saw
// to GC_WINDOW_DIR/<pid>.json: bytes moved into the old space by scavenges, and the time of each
// kind of collection. SIGWINCH, as no server here acts on it (close-with-grace shuts the service
// down on SIGUSR2).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import v8 from 'node:v8'

const oldSpace = (heap) => heap.heapSpaceStatistics.find(({ spaceName }) => spaceName === 'old_space').spaceUsedSize

let profiler
process.on('SIGWINCH', () => {
  if (profiler === undefined) {
    profiler = new v8.GCProfiler()
    profiler.start()
    return
  }
  const window = { promotedBytes: 0, scavenges: 0, scavengeMs: 0, oldSpaceCollections: 0, oldSpaceMs: 0 }
  for (const { gcType, cost, beforeGC, afterGC } of profiler.stop().statistics) {
    if (gcType === 'Scavenge') {
      window.scavenges++
      window.scavengeMs += cost / 1000
      window.promotedBytes += oldSpace(afterGC) - oldSpace(beforeGC)
    } else if (gcType === 'MarkSweepCompact') {
      window.oldSpaceCollections++
      window.oldSpaceMs += cost / 1000
    }
  }
  profiler = undefined
  writeFileSync(join(process.env.GC_WINDOW_DIR, `${process.pid}.json`), JSON.stringify(window))
})
