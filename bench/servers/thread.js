// The thread of the thread-per-request baseline: one task, one answer.
import { parentPort, workerData } from 'node:worker_threads'
import { fibTask } from './common.js'

parentPort.postMessage(fibTask(workerData))
