// The child of the fork baselines: computes each { num } it is sent and sends the body back.
import { fibTask } from './common.js'

process.on('message', ({ id, num }) => process.send({ id, ...fibTask({ num }) }))
