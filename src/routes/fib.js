// GET /fib: validates num, runs the naive Fibonacci on the pool, cancels it if the client leaves.
import { FibNumInvalid } from '../errors.js'
import { parseNum } from '../num.js'
import fibTask from '../../workers/fib.js'

export default async function fibRoute (app, { schema, maxNum, inlineMaxNum }) {
  // FIB_INLINE_MAX_NUM=0 turns inlining off, fib(0) included.
  const inlineUpTo = inlineMaxNum > 0 ? inlineMaxNum : -1
  app.get('/fib', {
    schema,
    // Runs before Ajv, whose coercion would take "1e2", "0x10" or " 5" for numbers.
    preValidation: (request, reply, done) => {
      const { num, message } = parseNum(request.query.num, maxNum)
      if (message !== undefined) return done(new FibNumInvalid(message))
      request.query.num = num
      done()
    },
    // Every refusal before work (queue, deadline, pressure, shutdown) is counted by its reason.
    onError: async (request, reply, err) => {
      if (err.reason !== undefined) app.metrics.rejected.inc({ reason: err.reason })
    }
  }, async function fib (request, reply) {
    const { num } = request.query
    // Cheaper than the hand-off to a thread: computed here, in microseconds (threadId 0).
    if (num <= inlineUpTo) {
      app.metrics.inline.inc()
      const { result, threadId, computeMs } = fibTask({ num })
      return { num, result, threadId, computeMs }
    }
    try {
      const { result, threadId, computeMs } = await app.pool.run({ num }, request.raw)
      return { num, result, threadId, computeMs }
    } catch (err) {
      if (!request.raw.destroyed) throw err
      // Nobody is left to answer: the pool has dropped the task or its result, or replaced its
      // thread. Returning nothing sends nothing: Fastify does not answer on a socket the client
      // has closed.
      request.log.info({ num, durationMs: reply.elapsedTime }, 'client closed the connection; task cancelled')
    }
  })
}
