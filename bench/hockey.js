// The open-loop chart: p99 latency of the 200s against offered load (medians over the rounds), one
// line per server, for all tasks and for the smallest ones. Log scale: past the compute limit latencies grow by orders.
const WIDTH = 340
const HEIGHT = 240
const LEFT = 56
const TOP = 40
const PLOT_W = WIDTH - LEFT - 16
const PLOT_H = HEIGHT - TOP - 44
const COLOURS = { service: '#2b7a3d', 'cluster prefork': '#c0392b', 'FIFO pool': '#2c6fbb' }
// Any other server (a variant of the service) in grey.
const OTHER = '#888'
const TICKS_MS = [1, 10, 100, 1000, 10000]

const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;')

function panel (x0, title, { loads, results }, servers, read) {
  const values = loads.flatMap((load) => servers.map((s) => read(results[load][s]))).filter((v) => v > 0)
  // Whole decades at the bottom, so that the lowest line always has a tick below it.
  const lo = Math.floor(Math.log10(Math.max(1, Math.min(...values))))
  const hi = Math.log10(Math.max(...values)) + 0.1
  const x = (load) => x0 + LEFT + (load - loads[0]) / (loads.at(-1) - loads[0]) * PLOT_W
  const y = (ms) => TOP + PLOT_H - (Math.log10(Math.max(ms, 1)) - lo) / (hi - lo) * PLOT_H
  const parts = [`<text x="${x0 + LEFT}" y="20" font-weight="bold">${escape(title)}</text>`]
  parts.push(`<rect x="${x0 + LEFT}" y="${TOP}" width="${PLOT_W}" height="${PLOT_H}" fill="none" stroke="#bbb"/>`)
  for (const ms of TICKS_MS.filter((ms) => Math.log10(ms) >= lo && Math.log10(ms) <= hi)) {
    parts.push(`<text x="${x0 + LEFT - 6}" y="${y(ms) + 4}" text-anchor="end" font-size="10">${ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`}</text>`,
      `<line x1="${x0 + LEFT}" y1="${y(ms)}" x2="${x0 + LEFT + PLOT_W}" y2="${y(ms)}" stroke="#eee"/>`)
  }
  for (const load of loads) parts.push(`<text x="${x(load)}" y="${TOP + PLOT_H + 14}" text-anchor="middle" font-size="10">${Math.round(load * 100)}%</text>`)
  parts.push(`<text x="${x0 + LEFT + PLOT_W / 2}" y="${TOP + PLOT_H + 30}" text-anchor="middle" font-size="11">offered load, share of C (what the best peer carries)</text>`)
  for (const name of servers) {
    const points = loads.map((load) => [load, read(results[load][name])]).filter(([, v]) => v > 0)
    parts.push(`<polyline fill="none" stroke="${COLOURS[name] ?? OTHER}" stroke-width="2" points="${points.map(([l, v]) => `${x(l).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`)
    for (const [l, v] of points) parts.push(`<circle cx="${x(l).toFixed(1)}" cy="${y(v).toFixed(1)}" r="2.5" fill="${COLOURS[name] ?? OTHER}"/>`)
  }
  return parts
}

export function hockey (open, machine) {
  const servers = Object.keys(open.results[open.loads[0]])
  const small = open.mix[0][0]
  const parts = [
    ...panel(0, 'p99 of all 200s', open, servers, (r) => r.p99?.[0]),
    ...panel(WIDTH, `p99 of fib(${small}), the smallest`, open, servers, (r) => r.classes[small].p99?.[0])
  ]
  servers.forEach((name, i) => parts.push(
    `<rect x="${LEFT + i * 160}" y="${HEIGHT + 2}" width="12" height="4" fill="${COLOURS[name] ?? OTHER}"/>`,
    `<text x="${LEFT + i * 160 + 16}" y="${HEIGHT + 8}" font-size="11">${escape(name)}</text>`))
  parts.push(`<text x="10" y="${HEIGHT + 28}" font-size="11" fill="#555">${escape(`${machine.cpu}, ${machine.cpus} CPUs, Node ${machine.node}, ${machine.date}; the load generator on the same cores, at the reference speed`)}</text>`)
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * WIDTH}" height="${HEIGHT + 36}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
${parts.join('\n')}
</svg>
`
}
