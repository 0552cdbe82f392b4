import { Histogram as PromHistogram, Registry } from 'prom-client'
import { test } from 'tap'
import { Histogram } from '../src/histogram.js'
import { DURATION_BUCKETS } from '../src/metrics.js'

// The same histogram twice, ours and prom-client's, each in a registry of its own.
function pair (options) {
  const ours = new Registry()
  const theirs = new Registry()
  return {
    ours: new Histogram({ ...options, registers: [ours] }),
    theirs: new PromHistogram({ ...options, registers: [theirs] }),
    exposition: async () => ({ ours: await ours.metrics(), theirs: await theirs.metrics() })
  }
}

// On a bound (le is "less or equal"), between bounds, below the first, past the last, zero.
const VALUES = [0, 0.0001, 0.0005, 0.0007, 0.001, 0.003, 0.5, 0.75, 30, 59.9, 60, 61, 1e6]

test('a labelled histogram exposes what prom-client\'s exposes for the same observations, line for line', async (t) => {
  const { ours, theirs, exposition } = pair({ name: 'http_request_duration_seconds', help: 'Time \\ from request\nto response.', labelNames: ['method', 'route', 'status_code'], buckets: DURATION_BUCKETS })
  const labels = [['GET', '/fib', 200], ['GET', '/fib', 400], ['GET', 'unmatched', 404], ['GET', '/we"ird\\route', 200]]
  VALUES.forEach((value, i) => {
    for (const [k, values] of labels.entries()) {
      if ((i + k) % 3 === 0) continue
      ours.labels(...values).observe(value)
      theirs.labels(...values).observe(value)
    }
  })
  const { ours: text, theirs: expected } = await exposition()
  t.equal(text, expected)
  t.match(text, 'http_request_duration_seconds_bucket{le="0.0005",method="GET",route="/fib",status_code="200"} 2')
})

test('an unlabelled histogram is exposed at zero before its first observation, then as prom-client\'s', async (t) => {
  const { ours, theirs, exposition } = pair({ name: 'fib_pool_task_run_seconds', help: 'Time a completed task computed.', buckets: [0.25, 0.5, 1] })
  let { ours: text, theirs: expected } = await exposition()
  t.equal(text, expected)
  t.match(text, 'fib_pool_task_run_seconds_count 0')
  for (const value of VALUES) {
    ours.observe(value)
    theirs.observe(value)
  }
  ;({ ours: text, theirs: expected } = await exposition())
  t.equal(text, expected)
  t.match(text, `fib_pool_task_run_seconds_count ${VALUES.length}`)
})

test('a value that is not a finite number is refused and leaves the series as it was', async (t) => {
  const histogram = new Histogram({ name: 'h', help: 'h', buckets: [1] })
  histogram.observe(0.5)
  for (const value of [NaN, Infinity, undefined, '1']) t.throws(() => histogram.observe(value), { name: 'TypeError', message: `Value is not a valid number: ${value}` }, String(value))
  const { values } = histogram.get()
  t.same(values.map(({ value }) => value), [1, 1, 0.5, 1])
})
