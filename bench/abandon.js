// One-off: fib(27) answers a second while clients give up some of their requests. PORTS lists
// servers already listening (the service at two commits, say); each round runs a closed loop of 4
// clients against each in turn, every request given up (its socket destroyed) with probability
// SHARE 0-2 ms after it was sent, and prints the 200s a second and the pool's aborted and retried
// counts from /metrics.
//   PORTS=3001,3002 SHARE=0.2 node bench/abandon.js
import http from 'node:http'

const PORTS = (process.env.PORTS || '3000').split(',').map(Number)
const SHARE = Number(process.env.SHARE || 0.2)
const SECONDS = Number(process.env.SECONDS || 4)
const ROUNDS = Number(process.env.ROUNDS || 2)
const CLIENTS = 4
const GIVE_UP_WITHIN_MS = 2

// One request; resolves true for a 200, false for anything else or for giving up.
function request (port, agent) {
  return new Promise((resolve) => {
    const givenUp = Math.random() < SHARE
    const req = http.get({ host: '127.0.0.1', port, path: '/fib?num=27', agent: givenUp ? false : agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode === 200))
    })
    req.on('error', () => resolve(false))
    if (givenUp) setTimeout(() => { req.destroy(); resolve(false) }, Math.random() * GIVE_UP_WITHIN_MS)
  })
}

async function metric (port, name) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  return [...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))].map((m) => `${m[1] ?? ''}${m[2]}`).join(' ')
}

for (let round = 1; round <= ROUNDS; round++) {
  for (const port of PORTS) {
    const agent = new http.Agent({ keepAlive: true })
    const end = Date.now() + SECONDS * 1000
    let ok = 0
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < end) if (await request(port, agent)) ok++
    }))
    agent.destroy()
    console.log(`round ${round}, port ${port}: ${(ok / SECONDS).toFixed(0)} 200s/s; aborted ${await metric(port, 'fib_pool_tasks_aborted_total')}; retried ${await metric(port, 'fib_pool_tasks_retried_total')}`)
  }
}
