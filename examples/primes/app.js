// GET /primes?below=N on the service's pool: the task, its size, and a route, nothing else.
// The example of docs/your-own-task.md.
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { poolOptions } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import errors from '../../src/errors.js'
import pool from '../../src/pool/index.js'

// A sieve holds a byte per number: 10 MB at most per task.
export const MAX_BELOW = 10_000_000

// What the pool needs to know of a task: its worker file, the size of an input (the sieve's cost,
// below x log log below, grows 25% faster than below from 10^4 to 10^7: close enough to order and
// admit by), and an input each thread runs at start to calibrate the cost model.
export const PRIMES_TASK = {
  file: fileURLToPath(new URL('./worker.js', import.meta.url)),
  work: ({ below }) => below,
  calibration: { below: 1_000_000 }
}

const schema = {
  querystring: {
    type: 'object',
    required: ['below'],
    // A string of digits, parsed here: Ajv's coercion would take "1e6" or " 5" for numbers.
    properties: { below: { type: 'string', pattern: '^[0-9]{1,8}$' } }
  }
}

// The pool takes the service's own settings (POOL_THREADS, POOL_MAX_WAIT_MS, ...:
// docs/configuration.md), read from `env`; `task` swaps the task's size function (e.g. one that
// cannot know the size: `() => 1`).
export async function build ({ env = process.env, task = PRIMES_TASK, execArgv } = {}) {
  const app = Fastify({ logger: false })
  await app.register(errors)
  await app.register(pool, { ...poolOptions(loadConfig(env)), task, execArgv })
  app.get('/primes', { schema }, async (request) => {
    const below = Number(request.query.below)
    if (below > MAX_BELOW) throw Object.assign(new Error(`below must be at most ${MAX_BELOW}, got ${below}`), { statusCode: 400 })
    const { result, threadId, computeMs } = await app.pool.run({ below }, request.raw)
    return { below, primes: result, threadId, computeMs }
  })
  return app
}
