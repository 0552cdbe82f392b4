// A small SVG bar chart of the benchmark: each server's throughput as a ratio of the reference.
const PANELS = [
  { id: 'heavy-2N', reference: 'cluster prefork', title: (w) => `${w.label.split(',')[0]}: req/s vs cluster prefork` },
  { id: 'trivial-64', reference: 'bare Fastify (no work)', title: (w) => `${w.label}: req/s vs bare Fastify` }
]
const BAR = 18
const GAP = 6
const LABEL = 190
const WIDTH = 640
const SCALE = 300 // px for a ratio of 1.0

const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;')

export function chart ({ machine, servers, workloads, results }) {
  const parts = []
  let y = 30
  for (const panel of PANELS) {
    const workload = workloads.find((w) => w.id === panel.id)
    const r = results[panel.id]
    parts.push(`<text x="10" y="${y}" font-weight="bold">${escape(panel.title(workload))}</text>`)
    y += 12
    const top = y
    for (const { name } of servers) {
      const value = r[name].rps / r[panel.reference].rps
      const width = Math.max(1, Math.min(value, 2) * SCALE)
      const fill = name.startsWith('service') ? '#2b7a3d' : '#8a8f98'
      // The ratio follows its bar, or sits inside it in white where the bar reaches the edge.
      const inside = LABEL + width + 6 > WIDTH - 60
      parts.push(
        `<text x="${LABEL - 8}" y="${y + BAR - 5}" text-anchor="end">${escape(name)}</text>`,
        `<rect x="${LABEL}" y="${y}" width="${width.toFixed(1)}" height="${BAR}" fill="${fill}"/>`,
        `<text x="${inside ? WIDTH - 60 : LABEL + width + 6}" y="${y + BAR - 5}"${inside ? ' fill="white"' : ''}>${value.toFixed(2)}x</text>`
      )
      y += BAR + GAP
    }
    parts.push(`<line x1="${LABEL + SCALE}" y1="${top - 4}" x2="${LABEL + SCALE}" y2="${y}" stroke="#333" stroke-dasharray="4 3"/>`)
    y += 30
  }
  parts.push(`<text x="10" y="${y - 8}" font-size="11" fill="#555">${escape(`${machine.cpu}, ${machine.cpus} CPUs, Node ${machine.node}, ${machine.date}; dashed line = 1.0x`)}</text>`)
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
${parts.join('\n')}
</svg>
`
}
