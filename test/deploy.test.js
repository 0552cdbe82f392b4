// The deployment files agree with the service: same scrape config, grace periods longer than the
// drain, probes on the right routes, a CPU limit that the pool sizing turns into threads.
import { readFileSync } from 'node:fs'
import { test } from 'tap'
import { parse } from 'yaml'
import { loadConfig } from '../src/config.js'

const read = (path) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')
// Compose files merge shared settings with `<<` (YAML 1.1 merge keys).
const compose = parse(read('docker-compose.yml'), { merge: true })
const deployment = parse(read('deploy/k8s/deployment.yaml'))
const { shutdownGraceMs } = loadConfig({})
const seconds = (duration) => Number(duration.replace(/s$/, ''))

test('compose: Prometheus uses the project\'s scrape config and rules', async (t) => {
  t.same(compose.services.prometheus.volumes, [
    './deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro',
    './deploy/rules.yml:/etc/prometheus/rules.yml:ro'
  ])
  t.same(parse(read('deploy/prometheus.yml')).scrape_configs[0].static_configs[0].targets, ['api:3000'], 'it scrapes the api service')
})

test('compose: the api has a CPU limit and a stop grace longer than the drain', async (t) => {
  const { api } = compose.services
  t.ok(api.cpus >= 1)
  t.ok(seconds(api.stop_grace_period) * 1000 > shutdownGraceMs, `${api.stop_grace_period} > ${shutdownGraceMs} ms`)
})

test('compose: the balanced profile runs HAProxy with the shipped file in front of two replicas like the api', async (t) => {
  const { api, api1, api2, haproxy } = compose.services
  for (const replica of [api1, api2]) {
    t.same(replica.profiles, ['balanced'])
    t.match(replica, { image: api.image, cpus: api.cpus, mem_limit: api.mem_limit, stop_grace_period: api.stop_grace_period })
  }
  t.same(haproxy.profiles, ['balanced'])
  t.same(haproxy.volumes, ['./deploy/haproxy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro'])
  t.match(haproxy.environment, { API1: 'api1:3000', API2: 'api2:3000' })
  t.same(Object.keys(haproxy.depends_on), ['api1', 'api2'])
})

test('compose: k6 runs scaling.js under the loadtest profile once the api is healthy', async (t) => {
  const { k6 } = compose.services
  t.same(k6.profiles, ['loadtest'])
  t.same(k6.depends_on, { api: { condition: 'service_healthy' } })
  t.equal(k6.environment.BASE_URL, 'http://api:3000')
  t.same(k6.command, ['run', '/scripts/scaling.js'])
})

test('compose: Grafana provisions the project\'s dashboard on the compose Prometheus', async (t) => {
  const { grafana } = compose.services
  t.same(grafana.volumes, [
    './deploy/grafana/provisioning:/etc/grafana/provisioning:ro',
    './deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro'
  ])
  const [source] = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')).datasources
  t.equal(source.url, 'http://prometheus:9090', 'the prometheus service')
  t.equal(parse(read('deploy/grafana/provisioning/dashboards/fib-pool.yml')).providers[0].options.path, '/var/lib/grafana/dashboards')
  const dashboard = JSON.parse(read('deploy/grafana/dashboards/fib-pool.json'))
  t.ok(dashboard.panels.length > 0)
  for (const panel of dashboard.panels) {
    t.ok(panel.targets.length > 0, panel.title)
    for (const target of [panel, ...panel.targets]) t.equal(target.datasource.uid, source.uid, `${panel.title}: the provisioned data source`)
  }
})

test('k8s: probes on /health and /ready, a grace period longer than preStop plus the drain', async (t) => {
  const pod = deployment.spec.template.spec
  const [api] = pod.containers
  t.equal(api.livenessProbe.httpGet.path, '/health')
  t.equal(api.readinessProbe.httpGet.path, '/ready')
  const preStop = Number(api.lifecycle.preStop.exec.command[1])
  t.ok(pod.terminationGracePeriodSeconds > preStop + shutdownGraceMs / 1000, `${pod.terminationGracePeriodSeconds} s > ${preStop} s + ${shutdownGraceMs} ms`)
})

test('k8s: CPU requests equal whole-CPU limits, so the quota gives the pool an exact thread count', async (t) => {
  const { resources } = deployment.spec.template.spec.containers[0]
  t.equal(resources.requests.cpu, resources.limits.cpu)
  t.match(resources.limits.cpu, /^[1-9][0-9]*$/, 'a whole number of CPUs: a fraction would be floored')
})

test('a memory limit is set everywhere, and the RSS bound is left to follow it', async (t) => {
  const [api] = deployment.spec.template.spec.containers
  t.equal(api.resources.limits.memory, '512Mi')
  t.notOk(api.env.some((e) => e.name === 'PRESSURE_MAX_RSS_BYTES'), 'k8s: no fixed RSS bound to drift from the limit')
  t.equal(compose.services.api.mem_limit, '512m')
  t.notOk('PRESSURE_MAX_RSS_BYTES' in compose.services.api.environment, 'compose: no fixed RSS bound to drift from the limit')
})
