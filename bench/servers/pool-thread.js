// A thread of the worker_threads pool baseline: computes each { id, num } it is posted, posts the body back.
import { parentPort } from 'node:worker_threads'
import { fibTask } from './common.js'

parentPort.on('message', ({ id, num }) => parentPort.postMessage({ id, ...fibTask({ num }) }))
