// Baseline 2: node:cluster prefork, THREADS processes sharing the port, each computing inline.
import cluster from 'node:cluster'
import { inline, serve, THREADS } from './common.js'

if (cluster.isPrimary) {
  cluster.schedulingPolicy = cluster.SCHED_RR
  for (let i = 0; i < THREADS; i++) cluster.fork()
} else {
  await serve(inline)
}
