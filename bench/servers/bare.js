// The HTTP ceiling: Fastify answering the same body without computing anything.
import { serve } from './common.js'

await serve(async () => ({ result: 0, threadId: 0, computeMs: 0 }))
