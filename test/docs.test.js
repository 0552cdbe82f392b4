// The docs hold together: relative links resolve (anchors included), every setting the schema
// accepts is documented with the code's default, tables stay readable, and the README stays short.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import { schema } from '../src/config.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SKIP = new Set(['node_modules', '.git', '.tools', 'reports', 'out', '.tap', 'coverage'])

function markdownFiles (dir = ROOT) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return []
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return markdownFiles(path)
    return entry.name.endsWith('.md') ? [path] : []
  })
}

// The text outside fenced code blocks.
const prose = (text) => text.replace(/^```[\s\S]*?^```/gm, '')

// GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen; repeats
// get -1, -2, ...
function anchors (text) {
  const seen = new Map()
  return new Set(prose(text).split('\n').filter((line) => /^#{1,6} /.test(line)).map((line) => {
    const slug = line.replace(/^#+ /, '').trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    return count === 0 ? slug : `${slug}-${count}`
  }))
}

// Every relative link of `file`'s text that does not resolve: a missing file, or an anchor its
// markdown target lacks.
function brokenLinks (file, text) {
  const broken = []
  for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target)) continue
    const [path, anchor] = target.split('#')
    const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
    let exists = true
    try { statSync(resolved) } catch { exists = false }
    if (!exists) broken.push(`${target} (no such file)`)
    else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${target} (no such heading)`)
    }
  }
  return broken
}

const tableRows = (text) => prose(text).split('\n').filter((line) => line.startsWith('|'))

test('the link check finds a missing file and a missing heading', async (t) => {
  const file = join(ROOT, 'README.md')
  t.same(brokenLinks(file, '[a](docs/nope.md) [b](docs/configuration.md#nope) [c](docs/configuration.md#the-pool) [d](https://x.org/y)'),
    ['docs/nope.md (no such file)', 'docs/configuration.md#nope (no such heading)'])
  t.ok(anchors('# A `b.js`: c, d\n## A `b.js`: c, d').has('a-bjs-c-d-1'), 'punctuation dropped, repeats numbered')
})

test('every relative link in the markdown resolves', async (t) => {
  const files = markdownFiles()
  t.ok(files.length >= 8, `${files.length} markdown files`)
  for (const file of files) {
    t.same(brokenLinks(file, readFileSync(file, 'utf8')), [], relative(ROOT, file))
  }
})

test('every setting is documented with the code\'s default, in docs/configuration.md and the README', async (t) => {
  for (const doc of ['docs/configuration.md', 'README.md']) {
    const rows = tableRows(readFileSync(join(ROOT, doc), 'utf8'))
    for (const [name, rule] of Object.entries(schema.properties)) {
      const row = rows.find((line) => line.startsWith(`| \`${name}\` |`))
      if (!t.ok(row, `${doc}: ${name} has a row`)) continue
      const defaultCell = row.split(' | ')[1]
      if (rule.default !== undefined) t.ok(defaultCell.includes(`\`${rule.default}\``), `${doc}: ${name} defaults to ${rule.default}`, { defaultCell })
      else t.ok(defaultCell.trim().length > 0, `${doc}: ${name} says what happens unset`)
    }
  }
})

test('the Retry-After client in docs/operations.md is the tested one, line for line', async (t) => {
  const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8')
  const shown = doc.slice(doc.indexOf('### A client that honours Retry-After')).match(/```js\n([\s\S]*?)```/)[1]
  const tested = readFileSync(join(ROOT, 'examples/retry-after.js'), 'utf8')
  t.ok(shown.includes('getWithRetry'), 'the docs show the client')
  t.same(shown.split('\n').filter((line) => !tested.includes(line)), [], 'every line shown is in examples/retry-after.js')
})

test('tables stay readable and the READMEs short', async (t) => {
  for (const file of markdownFiles()) {
    const long = tableRows(readFileSync(file, 'utf8')).filter((row) => row.length > 400)
    t.same(long.map((row) => row.slice(0, 80)), [], `${relative(ROOT, file)}: no table row over 400 characters`)
  }
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const settingRows = tableRows(readme).filter((row) => /^\| `[A-Z_]+` \|/.test(row))
  t.same(settingRows.filter((row) => row.length > 200), [], 'README: a setting\'s row is 200 characters at most')
  t.ok(readme.split('\n').length <= 300, 'README.md: 300 lines at most')
  t.ok(readFileSync(join(ROOT, 'bench/README.md'), 'utf8').split('\n').length <= 250, 'bench/README.md: 250 lines at most')
})
