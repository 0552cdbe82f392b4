// A real Prometheus (Debian package prometheus) scrapes the service with the project's scrape config.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import { parse, stringify } from 'yaml'
import { build, freePort, until } from '../helper.js'

const SCRAPE_CONFIG = new URL('../../deploy/prometheus.yml', import.meta.url)
const RULES = fileURLToPath(new URL('../../deploy/rules.yml', import.meta.url))
const DASHBOARD = new URL('../../deploy/grafana/dashboards/fib-pool.json', import.meta.url)

test('promtool finds no problem in the service\'s own metrics', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  await app.inject('/fib?num=10')
  const lint = spawnSync('promtool', ['check', 'metrics'], { input: (await app.inject('/metrics')).body, encoding: 'utf8' })
  t.equal(lint.error, undefined, 'promtool runs (Debian package prometheus; .ci/run installs it)')
  t.ok([0, 3].includes(lint.status), `promtool parsed the exposition (exit ${lint.status}): ${lint.stderr}`)
  // prom-client's own nodejs_active_*_total gauges break the counter-suffix rule; nothing else may.
  const problems = `${lint.stdout}${lint.stderr}`.split('\n').filter(Boolean)
  const ours = problems.filter((line) => !/^nodejs_active_\w+_total /.test(line))
  t.same(ours, [], 'no lint problem in the service\'s metrics')
})

test('the scrape config and the recording rules pass promtool', async (t) => {
  for (const args of [['check', 'config', fileURLToPath(SCRAPE_CONFIG)], ['check', 'rules', RULES]]) {
    const check = spawnSync('promtool', args, { encoding: 'utf8' })
    t.equal(check.status, 0, `promtool ${args[0]} ${args[1]}`, { output: `${check.stdout}${check.stderr}` })
  }
})

test('each alert fires on its condition and not below it (promtool test rules)', async (t) => {
  const check = spawnSync('promtool', ['test', 'rules', fileURLToPath(new URL('../../deploy/rules.test.yml', import.meta.url))], { encoding: 'utf8' })
  t.equal(check.status, 0, 'deploy/rules.test.yml passes', { output: `${check.stdout}${check.stderr}` })
})

test('Prometheus scrapes the service: up == 1 and the pool metrics arrive', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '2' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  await app.inject('/fib?num=25')

  // The project's config, pointed at this service and scraping every second.
  const config = parse(readFileSync(SCRAPE_CONFIG, 'utf8'))
  config.global.scrape_interval = '1s'
  config.global.evaluation_interval = '1s'
  config.rule_files = [RULES]
  config.scrape_configs[0].static_configs[0].targets = [`127.0.0.1:${app.server.address().port}`]
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config))

  const port = await freePort()
  const prometheus = spawn('prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`
  ], { stdio: 'ignore' })
  t.teardown(() => prometheus.kill('SIGKILL'))
  prometheus.on('error', (err) => t.fail(`cannot start prometheus: ${err.message}`))

  const query = async (promql) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`)
    return (await res.json()).data.result
  }
  let up
  await until(async () => {
    up = await query('up{job="fib-pool"}').catch(() => [])
    return up.length === 1 && up[0].value[1] === '1'
  }, 60_000)
  t.equal(up[0].value[1], '1', 'the target is up')
  const [threads] = await query('fib_pool_threads{job="fib-pool"}')
  t.equal(threads.value[1], '2', 'a pool metric arrives with its value')
  const [completed] = await query('fib_pool_tasks_completed_total')
  t.equal(completed.value[1], '1')

  // The three questions of docs/operations.md, answered by the recording rules, once two scrapes make a rate.
  const load = setInterval(() => app.inject('/fib?num=22'), 50)
  t.teardown(() => clearInterval(load))
  for (const rule of ['fib_pool:thread_busy:ratio_rate1m', 'fib_pool:requests_shed:ratio_rate1m', 'fib_pool:request_duration_seconds:p99_rate5m']) {
    let series
    await until(async () => {
      series = await query(rule)
      return series.length === 1 && Number.isFinite(Number(series[0].value[1]))
    }, 30_000)
    t.ok(Number(series[0].value[1]) >= 0, `${rule} = ${series[0].value[1]}`)
  }

  // Every query of the Grafana dashboard is valid PromQL and finds the series it names.
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'))
  for (const { expr } of dashboard.panels.flatMap((panel) => panel.targets)) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`)
    const body = await res.json()
    t.ok(body.status === 'success' && body.data.result.length > 0, `dashboard: ${expr}`, { error: body.error })
  }
})
