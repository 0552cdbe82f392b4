// Baseline 5: the primary owns HTTP and dispatches to a fixed pool of THREADS forked children
// over IPC, each child one task at a time, the rest queued in the primary.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { serve, THREADS } from './common.js'

const CHILD = fileURLToPath(new URL('./child.js', import.meta.url))
const idle = []
const queue = []
const pending = new Map()
let nextId = 0

for (let i = 0; i < THREADS; i++) {
  const child = fork(CHILD, [], { serialization: 'advanced' })
  child.on('message', ({ id, ...out }) => {
    pending.get(id)(out)
    pending.delete(id)
    const next = queue.shift()
    if (next) dispatch(child, next)
    else idle.push(child)
  })
  idle.push(child)
}

function dispatch (child, { num, resolve }) {
  const id = nextId++
  pending.set(id, resolve)
  child.send({ id, num })
}

await serve((num) => new Promise((resolve) => {
  const child = idle.pop()
  if (child) dispatch(child, { num, resolve })
  else queue.push({ num, resolve })
}))
