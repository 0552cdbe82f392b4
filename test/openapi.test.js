import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import { test } from 'tap'
import { dereference, readSpec, routeSchema, SPEC_PATH } from '../src/openapi.js'
import { build } from './helper.js'

test('openapi.yaml is a valid OpenAPI 3.1 document', async (t) => {
  const validator = new Validator()
  t.same(await validator.validate(fileURLToPath(SPEC_PATH)), { valid: true })
  t.equal(validator.version, '3.1')
})

test('the app serves exactly the routes the spec describes, besides /docs', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1' })
  const served = [...app.printRoutes({ commonPrefix: false }).matchAll(/^[├└]── (\/\S*) \(([^)]+)\)/gm)]
    .filter(([, path]) => path !== '/docs')
    .map(([, path, methods]) => [path, methods.split(', ').filter((m) => m !== 'HEAD').map((m) => m.toLowerCase())])
  const described = Object.entries(readSpec().paths).map(([path, item]) => [path, Object.keys(item)])
  t.same(Object.fromEntries(served), Object.fromEntries(described))
})

test('each route schema is the spec\'s, with num bounded by FIB_MAX_NUM', async (t) => {
  const spec = readSpec()
  const schema = routeSchema(dereference(spec), 'GET', '/fib')
  t.same(schema.querystring.properties.num, { type: 'integer', minimum: 0, maximum: 45 })
  t.same(schema.querystring.required, ['num'])
  t.same(Object.keys(schema.response), ['200', '400', '405', '422', '500', '503', '504'])
  t.same(schema.response[400], dereference(spec).components.schemas.Error)
  t.notOk('querystring' in routeSchema(dereference(spec), 'GET', '/health'), 'no parameters, no querystring schema')
})

test('the served document states the configured FIB_MAX_NUM', async (t) => {
  const { app } = await build(t, { POOL_THREADS: '1', FIB_MAX_NUM: '30' })
  const doc = (await app.inject('/docs/json')).json()
  t.equal(doc.paths['/fib'].get.parameters[0].schema.maximum, 30)
  const page = await app.inject('/docs/')
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], 'text/html')
})

test('a $ref to nowhere or an operation the spec lacks stops the build with a plain error', async (t) => {
  t.throws(() => dereference({ a: { $ref: '#/components/nope' } }), { message: 'openapi.yaml: unresolved $ref #/components/nope' })
  t.throws(() => routeSchema(readSpec(), 'POST', '/fib'), { message: 'openapi.yaml has no POST /fib' })
})

test('a route schema takes the query parameters only, and requires the required ones only', async (t) => {
  const spec = {
    paths: {
      '/x': {
        get: {
          parameters: [
            { name: 'n', in: 'query', required: true, schema: { type: 'integer' } },
            { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
            { name: 'x-trace', in: 'header', required: true, schema: { type: 'string' } }
          ],
          responses: { 200: { content: { 'text/plain': {} } } }
        }
      }
    }
  }
  t.same(routeSchema(spec, 'GET', '/x'), {
    response: {},
    querystring: { type: 'object', properties: { n: { type: 'integer' }, verbose: { type: 'boolean' } }, required: ['n'] }
  })
})

test('asking for a route the spec does not describe names it', async (t) => {
  const spec = readSpec()
  t.throws(() => routeSchema(spec, 'GET', '/nowhere'), { message: 'openapi.yaml has no GET /nowhere' })
  t.throws(() => routeSchema(spec, 'POST', '/fib'), { message: 'openapi.yaml has no POST /fib' })
})

test('dereferencing keeps nulls and other plain values as they are', async (t) => {
  const root = { a: { $ref: '#/b' }, b: { example: null, list: [1, 'two', null] } }
  t.same(dereference(root), { a: { example: null, list: [1, 'two', null] }, b: { example: null, list: [1, 'two', null] } })
})
