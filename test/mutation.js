// npm run test:mutation: mutates each source file against the test files that pin its behaviour
// (PLAN), one Stryker run per file, and prints the score of each. Letting Stryker pick the tests
// by coverage instead runs a dozen slow files against every mutant of cpus.js or config.js, which
// every app a test builds loads. Base settings: stryker.config.mjs; survivors no test can kill:
// stryker.equivalents.md. `npm run test:mutation -- src/num.js src/cpus.js` audits some files.
import { mkdir, writeFile } from 'node:fs/promises'
import { Stryker } from '@stryker-mutator/core'

// The tests that exercise an app (routes, hooks, errors, logs) through inject().
const APP_TESTS = ['test/routes/fib.test.js', 'test/routes/health.test.js', 'test/errors.test.js',
  'test/drain.test.js', 'test/request-log.test.js', 'test/openapi.test.js', 'test/pressure.test.js', 'test/http.test.js']

const PLAN = {
  'src/num.js': ['test/num.test.js', 'test/routes/fib.test.js'],
  'src/cpus.js': ['test/cpus.test.js', 'test/config.test.js'],
  'src/config.js': ['test/config.test.js', 'test/deploy.test.js'],
  'src/errors.js': ['test/errors.test.js', 'test/routes/fib.test.js', 'test/metrics.test.js', 'test/pool/index.test.js'],
  'src/drain.js': ['test/drain.test.js', 'test/system/connections.test.js'],
  'src/http.js': ['test/http.test.js', 'test/system/connections.test.js'],
  'src/pressure.js': ['test/pressure.test.js', 'test/routes/health.test.js'],
  'src/request-log.js': ['test/request-log.test.js'],
  'src/metrics.js': ['test/metrics.test.js', 'test/request-log.test.js', 'test/pool/index.test.js', 'test/system/connections.test.js'],
  'src/histogram.js': ['test/histogram.test.js', 'test/metrics.test.js'],
  'src/openapi.js': ['test/openapi.test.js'],
  'src/app.js': APP_TESTS,
  'src/tick-shape.js': ['test/tick-shape.test.js'],
  'src/routes/fib.js': ['test/routes/fib.test.js', 'test/metrics.test.js', 'test/errors.test.js'],
  'src/routes/health.js': ['test/routes/health.test.js', 'test/request-log.test.js'],
  'src/routes/ready.js': ['test/routes/health.test.js', 'test/request-log.test.js'],
  'src/pool/queue.js': ['test/pool/queue.test.js', 'test/pool/index.test.js'],
  'src/pool/balancer.js': ['test/pool/balancer.test.js', 'test/pool/index.test.js'],
  'src/pool/cost.js': ['test/pool/cost.test.js', 'test/pool/index.test.js'],
  'src/pool/index.js': ['test/pool/index.test.js', 'test/routes/fib.test.js', 'test/metrics.test.js', 'test/routes/health.test.js'],
  'workers/fib.js': ['test/workers/fib.test.js']
}

const REPORTS = 'reports/mutation'
const DETECTED = new Set(['Killed', 'Timeout'])
const UNDETECTED = new Set(['Survived', 'NoCoverage'])

async function audit (file) {
  const name = file.replaceAll('/', '_')
  const results = await new Stryker({
    mutate: [file],
    tap: { testFiles: PLAN[file] },
    reporters: ['html', 'json'],
    htmlReporter: { fileName: `${REPORTS}/${name}.html` },
    jsonReporter: { fileName: `${REPORTS}/${name}.json` },
    logLevel: 'warn'
  }).runMutationTest()
  const count = (statuses) => results.filter((r) => statuses.has(r.status)).length
  const survivors = results.filter((r) => UNDETECTED.has(r.status))
  const detected = count(DETECTED)
  // Mutants that crash or fail to load count for neither side, as in Stryker's own score.
  return { file, mutants: detected + survivors.length, detected, undetected: survivors.length, survivors }
}

function score ({ detected, undetected }) {
  return detected + undetected === 0 ? 100 : 100 * detected / (detected + undetected)
}

function where ({ location: { start }, mutatorName, replacement }) {
  return `${start.line}:${start.column + 1} ${mutatorName} → ${JSON.stringify(replacement)}`
}

const files = process.argv.slice(2)
const unknown = files.filter((file) => !(file in PLAN))
if (unknown.length > 0) {
  console.error(`test:mutation: no tests planned for ${unknown.join(', ')}; known: ${Object.keys(PLAN).join(', ')}`)
  process.exit(2)
}

await mkdir(REPORTS, { recursive: true })
const started = Date.now()
const audits = []
for (const file of files.length > 0 ? files : Object.keys(PLAN)) {
  const fileStarted = Date.now()
  const result = await audit(file)
  audits.push(result)
  const minutes = ((Date.now() - fileStarted) / 60000).toFixed(1)
  console.log(`${file}: ${score(result).toFixed(1)}% of ${result.mutants} mutants detected (${minutes} min)`)
  for (const survivor of result.survivors) console.log(`  ${survivor.status} ${where(survivor)}`)
}

const total = audits.reduce((sum, a) => ({ detected: sum.detected + a.detected, undetected: sum.undetected + a.undetected }),
  { detected: 0, undetected: 0 })
const rows = audits.map((a) => `| ${a.file} | ${a.mutants} | ${a.undetected} | ${score(a).toFixed(1)}% |`)
const summary = ['| file | mutants | undetected | score |', '|---|---|---|---|', ...rows,
  `| **all** | ${total.detected + total.undetected} | ${total.undetected} | **${score(total).toFixed(1)}%** |`,
  '', `${((Date.now() - started) / 60000).toFixed(1)} minutes`].join('\n')
await writeFile(`${REPORTS}/summary.md`, summary + '\n')
console.log('\n' + summary)
