// Baseline 3: a child process forked for every request, answering over IPC, then gone.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { serve } from './common.js'

const CHILD = fileURLToPath(new URL('./child.js', import.meta.url))

await serve((num) => new Promise((resolve, reject) => {
  const child = fork(CHILD, [], { serialization: 'advanced' })
  child.once('message', (out) => {
    resolve(out)
    child.kill()
  })
  child.once('error', reject)
  child.send({ num })
}))
