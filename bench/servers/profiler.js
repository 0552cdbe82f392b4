// Preloaded by bench/profile.js (node --import): a first SIGWINCH starts profiling the main thread,
// a second writes the profile to PROFILE_FILE, so that only the measured run is sampled.
// (SIGWINCH: the service's own SIGTERM, SIGINT and SIGUSR2 handlers shut it down.)
import { renameSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'

const session = new Session()
session.connect()
let profiling = false
process.on('SIGWINCH', async () => {
  profiling = !profiling
  if (profiling) {
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
  } else {
    const { profile } = await session.post('Profiler.stop')
    // Whole or not at all: the driver reads it as soon as it appears.
    writeFileSync(`${process.env.PROFILE_FILE}.part`, JSON.stringify(profile))
    renameSync(`${process.env.PROFILE_FILE}.part`, process.env.PROFILE_FILE)
  }
})
