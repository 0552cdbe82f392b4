// Baseline 5: the primary owns HTTP and dispatches to a fixed pool of THREADS forked children
// over IPC, each child one task at a time, the rest queued in the primary.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { serve, THREADS } from './common.js'
import { dispatcher } from './dispatcher.js'

const CHILD = fileURLToPath(new URL('./child.js', import.meta.url))
const children = Array.from({ length: THREADS }, () => fork(CHILD, [], { serialization: 'advanced' }))
const { answered, compute } = dispatcher(children, (child, task) => child.send(task))
for (const child of children) child.on('message', (answer) => answered(child, answer))

await serve(compute)
