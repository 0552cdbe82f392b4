import { fork } from 'node:child_process'
import { once } from 'node:events'
import http from 'node:http'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import { answerSpeed, drive, loadRps, meanFactor, mixTasks, nextWakeMs, offeredShare, stats, summarise } from '../../bench/open-client.js'

const CLIENT = fileURLToPath(new URL('../../bench/open-client.js', import.meta.url))

// A server on a free port answering /fib?num=N after `delayMs`: 200, or as `answer(num)` says
// ({ status, headers, body } or 'destroy'); it counts the requests.
async function server (t, { delayMs = 0, answer = () => ({ status: 200 }) } = {}) {
  const seen = { requests: 0 }
  const s = http.createServer((req, res) => {
    seen.requests++
    const num = Number(new URL(req.url, 'http://x').searchParams.get('num'))
    setTimeout(() => {
      const how = answer(num)
      if (how === 'destroy') return req.socket.destroy()
      res.writeHead(how.status, how.headers).end(how.body ?? '{}')
    }, delayMs)
  })
  s.listen(0, '127.0.0.1')
  await once(s, 'listening')
  t.teardown(() => s.close())
  seen.port = s.address().port
  return seen
}

test('stats: p50, p99, p99.9 and max; none for no latencies', async (t) => {
  const latencies = Array.from({ length: 1000 }, (_, i) => 1000 - i)
  t.same(stats(latencies), { p50: 501, p99: 991, p999: 1000, max: 1000 })
  t.equal(latencies[0], 1000, 'its input left as it was')
  t.equal(stats([]), undefined)
})

test('meanFactor: the readings inside the interval, else the last before it', async (t) => {
  const factors = [[0, 1], [100, 0.5], [200, 0.7], [300, 0.9]]
  t.equal(meanFactor(factors, 50, 250), 0.6)
  t.equal(meanFactor(factors, 120, 180), 0.5, 'no reading inside: the last before')
  t.equal(meanFactor(factors, 400, 500), 0.9)
  t.equal(meanFactor([[100, 1]], 0, 50), undefined, 'none at all before')
})

test('answerSpeed: the reference compute of the 200s answered since then over their computeMs', async (t) => {
  const refMs = { 20: 1, 30: 10 }
  const answers = [
    { num: 30, status: 200, at: 0, ms: 50, computeMs: 40 },
    { num: 20, status: 200, at: 900, ms: 50, computeMs: 2 },
    { num: 30, status: 503, at: 950, ms: 1 },
    { num: 30, status: 200, at: 960, ms: 30, computeMs: 18 }
  ]
  t.equal(answerSpeed(answers, refMs, 940), 11 / 20, 'the last two 200s, the 503 between them left out')
  t.equal(answerSpeed(answers, refMs, 40), 21 / 60, 'all three 200s')
  t.equal(answerSpeed(answers, refMs, 1000), undefined, 'none answered since')
  t.equal(answerSpeed([{ num: 20, status: 200, at: 0, ms: 1, computeMs: 0 }], refMs, 0), undefined, 'a compute under the timer\'s resolution says nothing')
})

test('summarise counts by class and status, and 503s without Retry-After', async (t) => {
  const mix = [[20, 0.5], [30, 0.5]]
  const summary = summarise([
    { num: 20, status: 200, ms: 1 },
    { num: 20, status: 200, ms: 3 },
    { num: 30, status: 200, ms: 10 },
    { num: 30, status: 503, ms: 2, retryAfter: 1 },
    { num: 30, status: 503, ms: 4, retryAfter: NaN },
    { num: 20, status: 0, ms: 5 }
  ], mix, 7)
  t.equal(summary.dropped, 7)
  t.same(summary.all, stats([1, 3, 10]))
  t.match(summary.classes[20], { ok: 2, notOk: 1, p99: 3 })
  t.match(summary.classes[30], { ok: 1, notOk: 2, p99: 10 })
  t.match(summary.refused, { count: 2, withoutRetryAfter: 1, p99: 4 })
})

test('the open loop sends at the rate times the speed', async (t) => {
  const mix = [[25, 1]]
  const slow = await server(t)
  const fast = await server(t)
  await Promise.all([
    drive({ port: slow.port, mix, seed: 0, seconds: 1, rate: 100 }, () => 0.3, [[0, 0.3]]),
    drive({ port: fast.port, mix, seed: 0, seconds: 1, rate: 100 }, () => 1, [[0, 1]])
  ])
  t.ok(slow.requests >= 25 && slow.requests <= 35, `about 30 at 0.3 of the speed (${slow.requests})`)
  t.ok(fast.requests >= 90 && fast.requests <= 105, `about 100 at full speed (${fast.requests})`)
})

test('nextWakeMs: the open loop sleeps until its next request is due, 1 to 100 ms', async (t) => {
  t.equal(nextWakeMs(0, 0.1), 10, '100 a second: 10 ms')
  t.equal(nextWakeMs(0.5, 0.1), 5, 'half of one owed already')
  t.equal(nextWakeMs(0.999, 0.1), 1, 'no busy loop')
  t.equal(nextWakeMs(0, 0.001), 100, 'and no sleep past the next speed reading')
  t.equal(nextWakeMs(0, 0), 100, 'nor for ever at a speed of 0')
})

test('with refMs, the open loop sends at the rate times the speed its answers show', async (t) => {
  const mix = [[25, 1]]
  // Each answer computed in 4 ms what takes 1 ms at the reference speed: a quarter of the rate,
  // once the first answers are in, however fast the probes read the machine.
  const body = JSON.stringify({ computeMs: 4 })
  const slow = await server(t, { answer: () => ({ status: 200, body }) })
  const plain = await server(t, { answer: () => ({ status: 200, body }) })
  await Promise.all([
    drive({ port: slow.port, mix, seed: 0, seconds: 1, rate: 200, refMs: { 25: 1 } }, () => 1, [[0, 1]]),
    drive({ port: plain.port, mix, seed: 0, seconds: 1, rate: 200 }, () => 1, [[0, 1]])
  ])
  t.ok(slow.requests >= 40 && slow.requests <= 70, `about 50 at a quarter of the speed (${slow.requests})`)
  t.ok(plain.requests >= 180 && plain.requests <= 210, `about 200 without refMs (${plain.requests})`)
})

test('with refMs, the closed loop\'s summary holds the speed of all its answers', async (t) => {
  const mix = [[20, 0.5], [25, 0.5]]
  const { port } = await server(t, { answer: (num) => ({ status: 200, body: JSON.stringify({ computeMs: num === 20 ? 2 : 8 }) }) })
  const summary = await drive({ port, mix, seed: 0, seconds: 0.2, vus: 2, refMs: { 20: 1, 25: 2 } }, () => 1, [[0, 1]])
  const { 20: small, 25: big } = summary.classes
  t.ok(small.ok > 0 && big.ok > 0, `both classes answered (${small.ok}, ${big.ok})`)
  t.equal(summary.answerSpeed, (small.ok * 1 + big.ok * 2) / (small.ok * 2 + big.ok * 8), 'their reference compute over their computeMs')
  const plain = await drive({ port, mix, seed: 0, seconds: 0.1, vus: 2 }, () => 1, [[0, 1]])
  t.equal(plain.answerSpeed, undefined, 'none without refMs')
})

test('offeredShare: the compute of every request answered, over the window and the threads', async (t) => {
  const summary = { dropped: 5, classes: { 28: { ok: 90, notOk: 10 }, 35: { ok: 2, notOk: 0 } } }
  const classMs = { 28: 5, 35: 150 }
  t.equal(offeredShare(summary, classMs, 2, 2), (100 * 5 + 2 * 150) / 4000, '503s count as offered, dropped requests (no num) do not')
  t.equal(offeredShare({ dropped: 0, classes: { 28: { ok: 0, notOk: 0 } } }, classMs, 2, 2), 0)
})

test('mixTasks: the 200s as tasks of the mix\'s mean cost, whatever the draw held', async (t) => {
  const mix = [[28, 0.9], [35, 0.1]]
  const classMs = { 28: 5, 35: 95 }
  // The mix's mean cost is 14 ms: 90 cheap and 10 dear tasks are 100 of them.
  t.equal(mixTasks({ classes: { 28: { ok: 90, notOk: 3 }, 35: { ok: 10, notOk: 1 } } }, mix, classMs), 100, 'only the 200s count')
  // A draw short of dear tasks: 95 answers, the work of 66 of the mix's.
  t.equal(mixTasks({ classes: { 28: { ok: 90, notOk: 0 }, 35: { ok: 5, notOk: 0 } } }, mix, classMs), (90 * 5 + 5 * 95) / 14)
  t.equal(mixTasks({ classes: { 28: { ok: 0, notOk: 0 }, 35: { ok: 0, notOk: 0 } } }, mix, classMs), 0)
})

test('loadRps: C, but never past the compute limit', async (t) => {
  t.equal(loadRps({ rps: 130, ratio: 0.9 }), 130, 'C under the limit: C')
  t.equal(loadRps({ rps: 130, ratio: 1 }), 130)
  t.equal(loadRps({ rps: 150, ratio: 1.25 }), 120, 'C read past the limit: scaled back to it')
})

test('latencies are given at the reference speed', async (t) => {
  const { port } = await server(t, { delayMs: 40 })
  const summary = await drive({ port, mix: [[25, 1]], seed: 0, seconds: 0.2, rate: 20 }, () => 2, [[0, 2]])
  // A timer may fire up to a millisecond early against the client's clock (libuv times it from
  // the loop's cached now), so a 40 ms answer can read 39.99 ms; unscaled it would read about 40.
  t.ok(summary.all.p50 >= 2 * 38, `a 40 ms answer while the machine ran twice the reference speed: about 80 ms (${summary.all.p50})`)
})

test('what cannot be sent for the requests in flight is dropped', async (t) => {
  const { port } = await server(t, { delayMs: 400 })
  const summary = await drive({ port, mix: [[25, 1]], seed: 0, seconds: 0.3, rate: 100, maxInFlight: 2 }, () => 1, [[0, 1]])
  t.equal(summary.classes[25].ok, 2)
  t.ok(summary.dropped >= 20, `the rest dropped (${summary.dropped})`)
})

test('the closed loop keeps `vus` requests in flight; 503s and lost answers are counted', async (t) => {
  let n = 0
  const answers = [{ status: 503, headers: { 'retry-after': '1' } }, { status: 503 }, 'destroy', { status: 200 }]
  const { port } = await server(t, { delayMs: 10, answer: () => answers[n++ % answers.length] })
  const summary = await drive({ port, mix: [[25, 1]], seed: 0, seconds: 0.3, vus: 2 }, () => 1, [[0, 1]])
  const { ok, notOk } = summary.classes[25]
  t.ok(ok > 0 && ok + notOk <= 2 * 30, `at most two at a time (${ok + notOk})`)
  t.ok(summary.refused.count > 0 && summary.refused.withoutRetryAfter > 0 && notOk > summary.refused.count, 'refusals with and without Retry-After, and errors')
})

test('with trace, the summary holds each 200 as it ran: when sent, num, computeMs, latency', async (t) => {
  let n = 0
  const { port } = await server(t, { delayMs: 20, answer: (num) => (n++ % 3 === 2 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200, body: JSON.stringify({ num, computeMs: num / 10 }) }) })
  const mix = [[20, 0.5], [25, 0.5]]
  const before = Date.now()
  const summary = await drive({ port, mix, seed: 0, seconds: 0.3, rate: 100, trace: true }, () => 1, [[0, 2]])
  const { trace } = summary
  t.equal(trace.length, summary.classes[20].ok + summary.classes[25].ok, 'every 200, and nothing else')
  t.ok(summary.refused.count > 0, 'the 503s left out')
  t.ok(trace.every(([at, num, computeMs, ms]) => at >= before - 1 && at <= Date.now() && (num === 20 || num === 25) && computeMs === num / 10 && ms >= 19), 'each: when sent, its num, the computeMs of its body, its latency')
  t.equal(Math.max(...trace.map(([, , , ms]) => ms)) * 2, summary.all.max, 'the latency as it ran, not at the reference speed (twice it here)')
  t.ok(trace.every(([at], i) => i === 0 || at >= trace[i - 1][0]), 'in the order sent')
  const plain = await drive({ port, mix, seed: 0, seconds: 0.1, rate: 100 }, () => 1, [[0, 1]])
  t.equal(plain.trace, undefined, 'none without trace')
})

test('forked, it runs the load its first message asks for and sends the summary back', async (t) => {
  const seen = await server(t)
  const child = fork(CLIENT, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  child.send({ port: seen.port, mix: [[25, 1]], seed: 0, seconds: 0.5, rate: 40, factor: 1 })
  child.send({ at: Date.now(), factor: 0.5 })
  const [summary] = await once(child, 'message')
  await once(child, 'exit')
  t.equal(summary.classes[25].ok, seen.requests)
  t.ok(seen.requests >= 8 && seen.requests <= 15, `at the speed sent after the start (${seen.requests})`)
})

test('the summary holds the CPU time the client spent a request sent', async (t) => {
  const { port } = await server(t)
  const before = process.cpuUsage()
  const summary = await drive({ port, mix: [[25, 1]], seed: 0, seconds: 0.3, rate: 50 }, () => 1, [[0, 1]])
  const cpu = process.cpuUsage(before)
  const sent = summary.classes[25].ok + summary.classes[25].notOk
  const spent = summary.clientUs * sent
  // Here the server runs in the same process, so the two measure the same CPU, the test's over a
  // little longer.
  t.ok(sent >= 10 && spent > 0 && spent <= cpu.user + cpu.system && spent >= 0.5 * (cpu.user + cpu.system), `${summary.clientUs} µs a request, ${sent} requests, ${cpu.user + cpu.system} µs in all`)
  const none = await drive({ port, mix: [[25, 1]], seed: 0, seconds: 0, vus: 1 }, () => 1, [[0, 1]])
  t.equal(none.clientUs, undefined, 'none for no request sent')
})
