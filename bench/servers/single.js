// Baseline 1: compute in the request handler, on the one and only thread.
import { inline, serve } from './common.js'

await serve(inline)
