// Preloaded (--import) into the Fastify + Piscina baseline by bench/promotion.js: Piscina with the
// pool's one view a thread (src/pool/thread-views.js), and nothing else of the service.
import { keepThreadViews, piscinaWorkerInfo } from '../../src/pool/thread-views.js'

keepThreadViews(piscinaWorkerInfo())
