// node bench/quiet.js [seconds]: is this machine quiet enough to benchmark? Each CPU's speed
// (bench/speed.js) over every 2 s against its fastest second so far, for `seconds` (60 by
// default). A quiet machine stays near 1; a shared one in a slow stretch reads 1.4-1.9, which the
// open loop's load follows (open.js) and the closed loop's figures do not.
import { watchSpeed } from './speed.js'

const seconds = Number(process.argv[2] ?? 60)
if (!(seconds > 0 && seconds <= 3600)) {
  console.error(`bench: ${JSON.stringify(process.argv[2])} is invalid: expected seconds, over 0 and at most 3600`)
  process.exit(1)
}
const speed = watchSpeed()
const started = Date.now()
const timer = setInterval(() => {
  const now = Date.now()
  console.log(`${((now - started) / 1000).toFixed(0).padStart(4)} s  slowdown ${speed.slowdown(now - 2000, now)?.toFixed(2) ?? '-'}`)
  if (now - started >= seconds * 1000) {
    clearInterval(timer)
    speed.stop()
  }
}, 2000)
