// Main-thread backpressure: @fastify/under-pressure, answering in the service's own error shape.
import underPressure from '@fastify/under-pressure'
import fp from 'fastify-plugin'
import { UnderPressure } from './errors.js'

// How often the main thread's event-loop delay, utilisation, heap and RSS are sampled.
export const SAMPLE_INTERVAL_MS = 500
const RETRY_AFTER_S = Math.ceil(SAMPLE_INTERVAL_MS / 1000)

const WHAT = {
  eventLoopDelay: (value, limit) => `event-loop delay ${value.toFixed(0)} ms is over ${limit.maxEventLoopDelay} ms`,
  eventLoopUtilization: (value, limit) => `event-loop utilisation ${value.toFixed(2)} is over ${limit.maxEventLoopUtilization}`,
  heapUsedBytes: (value, limit) => `heap ${value} bytes is over ${limit.maxHeapUsedBytes}`,
  rssBytes: (value, limit) => `RSS ${value} bytes is over ${limit.maxRssBytes}`
}

// Applies to the scope it is registered in: the work routes, never /health or /metrics.
async function pressure (app, { maxEventLoopDelayMs, maxEventLoopUtilization, maxHeapUsedBytes, maxRssBytes }) {
  const limits = { maxEventLoopDelay: maxEventLoopDelayMs, maxEventLoopUtilization, maxHeapUsedBytes, maxRssBytes }
  await app.register(underPressure, {
    ...limits,
    sampleInterval: SAMPLE_INTERVAL_MS,
    pressureHandler: async (request, reply, type, value) => {
      throw Object.assign(new UnderPressure(WHAT[type](value, limits)), { retryAfter: RETRY_AFTER_S })
    }
  })
}

export default fp(pressure, { name: 'pressure' })
