import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const FIXTURE = fileURLToPath(new URL('./fixtures/tick-shape.js', import.meta.url))

// The states of the caches that define a nextTick entry's keys, in slot order, after a full
// collection (see the fixture). Run through env(1) without the test runner's preloaded modules,
// which it adds to every child's NODE_OPTIONS: their start-up turns the caches before any module
// of ours runs. The feedback goes to a file: V8 prints it with C's stdio, which drops what a
// non-blocking pipe does not take at once, and the service makes its stdout one.
async function defineCaches (t, modules) {
  const file = join(t.testdir(), 'feedback.txt')
  const out = openSync(file, 'w')
  const child = spawn('env', ['-u', 'NODE_OPTIONS', process.execPath,
    '--expose-gc', '--allow-natives-syntax', FIXTURE, modules], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', out, 'inherit']
  })
  closeSync(out)
  t.same(await once(child, 'exit'), [0, null], 'the fixture exits 0')
  const states = [...readFileSync(file, 'utf8').matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)]
    .map((match) => match[1])
  t.ok(states.length >= 2, 'the feedback lists the define caches')
  return states
}

t.test('the module holds a nextTick queue entry once a tick has run', async (t) => {
  const shape = await import('../src/tick-shape.js')
  await new Promise((resolve) => process.nextTick(resolve))
  t.type(shape.tickEntry.callback, 'function')
  t.ok(Object.getOwnPropertySymbols(shape.tickEntry).length > 0, 'with the async ids under symbols')
})

t.test('a full collection while no entry is alive leaves nextTick megamorphic', async (t) => {
  const states = await defineCaches(t, 'none')
  t.ok(states.includes('MEGAMORPHIC'), states.join(' '))
})

for (const modules of ['pin', 'server']) {
  t.test(`with the entry held (${modules}), the same collection leaves every define cache monomorphic`, async (t) => {
    const states = await defineCaches(t, modules)
    t.same(states.filter((state) => state !== 'MONOMORPHIC'), [], states.join(' '))
  })
}
