// No Docker engine runs here, so this runs what the image would run: the Dockerfile's final
// stage is read, its files and production dependencies are staged as the image has them, and
// its CMD is started with its ENV as an unprivileged user; then its HEALTHCHECK must pass while
// the service runs and fail once it has stopped, and SIGTERM must end it with exit 0.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const RUN_AS = 'nobody'
const repo = new URL('..', import.meta.url).pathname
const fail = (message) => {
  console.error(`image check: ${message}`)
  process.exit(1)
}

// The final stage's instructions, continuation lines joined.
const dockerfile = readFileSync(join(repo, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ')
const stages = dockerfile.split(/^FROM .*$/m)
const final = stages.at(-1).split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'))
const instruction = (name) => final.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim())
const env = Object.fromEntries(instruction('ENV').flatMap((line) => [...line.matchAll(/(\w+)=(\S+)/g)].map(([, k, v]) => [k, v])))
const [workdir] = instruction('WORKDIR')
const [user] = instruction('USER')
const cmd = JSON.parse(instruction('CMD')[0])
const healthcheck = JSON.parse(instruction('HEALTHCHECK')[0].replace(/^.*?CMD /, ''))
if (user === undefined || user === 'root') fail('the image must not run as root')
if (!stages[1].includes('npm ci --omit=dev')) fail('the dependency stage must install with npm ci --omit=dev')
console.log(`image check: CMD ${JSON.stringify(cmd)} in ${workdir} as ${user} (here: ${RUN_AS}), ENV ${JSON.stringify(env)}`)

// Stage WORKDIR as the image has it: the COPY'd files and production dependencies only.
const stage = mkdtempSync(join(tmpdir(), 'image-'))
process.on('exit', () => rmSync(stage, { recursive: true, force: true }))
for (const line of instruction('COPY').filter((l) => !l.startsWith('--from'))) {
  const parts = line.split(/\s+/)
  const dest = parts.pop()
  for (const source of parts) cpSync(join(repo, source), join(stage, dest.endsWith('/') ? source : dest), { recursive: true })
}
cpSync(join(repo, 'package-lock.json'), join(stage, 'package-lock.json'))
execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: stage, stdio: 'inherit' })
if (existsSync(join(stage, 'node_modules', 'tap'))) fail('dev dependencies reached the image')
chmodSync(stage, 0o755)

const freePort = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address()
    server.close(() => resolve(port))
  })
})
// The image's ENV, with only the port moved off 3000 so that a busy port here cannot interfere.
const childEnv = { PATH: process.env.PATH, ...env, PORT: String(freePort) }
// setpriv execs the command itself, so signals reach node as they would as the image's PID 1.
const asUser = (args, options) => ['setpriv', ['--reuid', RUN_AS, '--regid', 'nogroup', '--clear-groups', '--', ...args], { cwd: stage, env: childEnv, ...options }]

const service = spawn(...asUser(cmd, { stdio: ['ignore', 'pipe', 'inherit'] }))
const exited = new Promise((resolve) => service.on('exit', (code) => resolve(code)))
let output = ''
await new Promise((resolve, reject) => {
  service.stdout.on('data', (chunk) => {
    output += chunk
    if (output.includes('"pool ready"')) resolve()
  })
  exited.then(() => reject(new Error(`the service exited before it was ready:\n${output}`)))
  setTimeout(() => reject(new Error('the service was not ready within 30 s')), 30_000).unref()
}).catch((err) => fail(err.message))

const uid = readFileSync(`/proc/${service.pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)[1]
if (uid === '0') fail('the service runs as root')
const health = spawnSync(...asUser(healthcheck, { stdio: 'inherit' }))
if (health.status !== 0) fail(`HEALTHCHECK failed (exit ${health.status}) while the service runs`)
const fib = await fetch(`http://127.0.0.1:${freePort}/fib?num=20`).then((res) => res.json())
if (fib.result !== 6765) fail(`GET /fib?num=20 answered ${JSON.stringify(fib)}`)
console.log(`image check: listening on ${env.HOST}, uid ${uid}, HEALTHCHECK passes, fib(20) = ${fib.result}`)

service.kill('SIGTERM')
const code = await exited
if (code !== 0) fail(`SIGTERM ended the service with exit ${code}, not 0`)
const after = spawnSync(...asUser(healthcheck, { stdio: 'ignore' }))
if (after.status === 0) fail('HEALTHCHECK passes with no service: it checks nothing')
console.log('image check: SIGTERM exits 0; HEALTHCHECK fails once the service is gone')
