// The OpenAPI document, loaded once: the single source of the route schemas.
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'

export const SPEC_PATH = new URL('../openapi.yaml', import.meta.url)

// Replaces every local `$ref` by the part it points to, so that each route schema
// stands alone (Fastify and the serializer then need no shared schema store).
export function dereference (node, root = node) {
  if (Array.isArray(node)) return node.map((item) => dereference(item, root))
  if (node === null || typeof node !== 'object') return node
  if (typeof node.$ref === 'string') {
    const target = node.$ref.slice(2).split('/').reduce((part, key) => part?.[key], root)
    if (target === undefined) throw new Error(`openapi.yaml: unresolved $ref ${node.$ref}`)
    return dereference(target, root)
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, dereference(value, root)]))
}

// The document; given the configured FIB_MAX_NUM, as the service serves it: that maximum for num,
// in the served docs and in validation alike.
export function readSpec ({ fibMaxNum } = {}) {
  const spec = parse(readFileSync(SPEC_PATH, 'utf8'))
  if (fibMaxNum !== undefined) spec.paths['/fib'].get.parameters.find((param) => param.name === 'num').schema.maximum = fibMaxNum
  return spec
}

// The Fastify schema (querystring + one response schema per status) of one operation.
export function routeSchema (resolved, method, url) {
  const operation = resolved.paths[url]?.[method.toLowerCase()]
  if (operation === undefined) throw new Error(`openapi.yaml has no ${method} ${url}`)
  const schema = {
    // JSON responses get a schema (validated shape, fast serialisation); text goes out as it is.
    response: Object.fromEntries(Object.entries(operation.responses)
      .filter(([, response]) => response.content['application/json'] !== undefined)
      .map(([status, response]) => [status, response.content['application/json'].schema]))
  }
  const query = (operation.parameters ?? []).filter((param) => param.in === 'query')
  if (query.length > 0) {
    schema.querystring = {
      type: 'object',
      properties: Object.fromEntries(query.map((param) => [param.name, param.schema])),
      required: query.filter((param) => param.required).map((param) => param.name)
    }
  }
  return schema
}
