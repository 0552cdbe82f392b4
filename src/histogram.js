// A Prometheus histogram for the hot path, served by prom-client's registry like its own.
//
// prom-client's Histogram spends about 1.5 us on each observe here, on the main thread, even
// through a child kept per label set: it rebuilds the label hash, looks the series up by that
// string and counts in an object keyed by each bucket's bound (docs/benchmarks.md, "Questions
// answered"). That was a quarter of everything the service adds to a trivial request. Here a
// series is an array of counts, found by its label values in a Map; observing is a scan of the bounds
// and three additions. At scrape time `get()` hands the registry what prom-client's own
// histogram hands it, so the exposition is the same line for line (test/histogram.test.js).

export class Histogram {
  // The options prom-client's Histogram takes, for the ones used here.
  constructor ({ name, help, buckets, labelNames = [], registers = [] }) {
    this.name = name
    this.help = help
    this.type = 'histogram'
    this.aggregator = 'sum'
    this.labelNames = labelNames
    // The last bound is +Inf: every finite value stops there, in the +Inf bucket.
    this.bounds = Float64Array.of(...buckets, Infinity)
    this.series = new Map()
    if (labelNames.length === 0) this.unlabelled = this.labels()
    for (const registry of registers) registry.registerMetric(this)
  }

  // The series of these label values, in labelNames' order, made on first use.
  labels (...values) {
    const key = values.join('\u0000')
    let series = this.series.get(key)
    if (series === undefined) {
      const labels = Object.fromEntries(this.labelNames.map((name, i) => [name, String(values[i])]))
      series = new Series(labels, this.bounds)
      this.series.set(key, series)
    }
    return series
  }

  observe (value) {
    this.unlabelled.observe(value)
  }

  // What prom-client's registry formats: each series' cumulative buckets, +Inf, sum and count.
  get () {
    const bucket = `${this.name}_bucket`
    const values = []
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += counts[i]
        const le = this.bounds[i] === Infinity ? '+Inf' : this.bounds[i]
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: bucket })
      }
      values.push(
        { labels, value: sum, metricName: `${this.name}_sum` },
        { labels, value: count, metricName: `${this.name}_count` }
      )
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }
}

class Series {
  constructor (labels, bounds) {
    this.labels = labels
    this.bounds = bounds
    // One count per bucket, not cumulative: the share of each bound over the one before it.
    this.counts = new Float64Array(bounds.length)
    this.sum = 0
    this.count = 0
  }

  observe (value) {
    // A value that is not a number would corrupt the sum for good: refused as prom-client does.
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`)
    let i = 0
    while (value > this.bounds[i]) i++
    this.counts[i]++
    this.sum += value
    this.count++
  }
}
