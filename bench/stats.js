// Order statistics shared by the closed and open loops.

// The lower median (of an even count, the smaller middle value); `values` is left as it is.
export function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

// The p-th quantile (0 to 1) of values already sorted.
export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

// [median, min, max] of the values known, undefined for none.
export function spread (values) {
  const known = values.filter((v) => v !== undefined && v !== null)
  return known.length === 0 ? undefined : [median(known), Math.min(...known), Math.max(...known)]
}
