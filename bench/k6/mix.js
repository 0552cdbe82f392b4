// The open loop's task sizes: the i-th request's num, drawn from the mix by a generator seeded
// with the round and i. Servers compared side by side get the same tasks in the same order, so a
// draw heavy in fib(35)s (a 20 s run holds anywhere from about 45 to 75 of them, the load -5% to
// +6%) falls on all of them alike, while the draws stay independent, bursts included: the queue
// is measured against the variety it exists for. Plain JavaScript, as k6 (bench/k6/side-by-side.js)
// imports it, as well as Node (bench/open-client.js).

// mulberry32's step: well mixed even for neighbouring seeds, so each index gets its own draw.
function uniform (seed) {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

// `mix`: [[num, share], ...], shares summing to 1. Returns i => the num of the i-th task.
export function mixSequence (mix, seed = 0) {
  return (i) => {
    let u = uniform(seed ^ Math.imul(i + 1, 0x9e3779b1))
    for (const [num, share] of mix) {
      if (u < share) return num
      u -= share
    }
    return mix[mix.length - 1][0]
  }
}
