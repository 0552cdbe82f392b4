import { test } from 'tap'
import { dispatcher } from '../../bench/servers/dispatcher.js'

// A dispatcher over workers 'a' and 'b' that records what it posts, as the baselines start it
// (TASKS_PER_WORKER, if set, in the environment); `answer(worker)` answers the oldest task posted
// to it.
function posted () {
  const posts = []
  const { answered, compute } = dispatcher(['a', 'b'], (worker, task) => posts.push({ worker, ...task }))
  const answer = (worker) => {
    const at = posts.findIndex((post) => post.worker === worker && !post.answered)
    posts[at].answered = true
    answered(worker, { id: posts[at].id, result: posts[at].num })
  }
  return { posts, compute, answer }
}

test('dispatcher: one task a worker by default, the rest first come, first served', async (t) => {
  delete process.env.TASKS_PER_WORKER
  const { posts, compute, answer } = posted()
  const answers = [1, 2, 3, 4].map((num) => compute(num))
  t.same(posts.map(({ worker, num }) => [worker, num]), [['b', 1], ['a', 2]])
  answer('a')
  t.same(await answers[1], { result: 2 })
  t.same(posts.at(-1), { worker: 'a', id: 2, num: 3 }, 'the first waiting task goes to the worker freed')
  answer('b')
  t.same(posts.at(-1), { worker: 'b', id: 3, num: 4 })
  t.same(await answers[0], { result: 1 })
  answer('a')
  answer('b')
  compute(5)
  t.same(posts.at(-1), { worker: 'b', id: 4, num: 5 }, 'of two idle workers, the one freed last')
})

test('dispatcher: with TASKS_PER_WORKER=2, two tasks a worker, each to the worker holding fewer', async (t) => {
  process.env.TASKS_PER_WORKER = '2'
  t.teardown(() => { delete process.env.TASKS_PER_WORKER })
  const { posts, compute, answer } = posted()
  const answers = [1, 2, 3].map((num) => compute(num))
  t.same(posts.map(({ worker }) => worker), ['b', 'a', 'b'])
  answer('a')
  t.same(await answers[1], { result: 2 })
  compute(4)
  t.equal(posts.at(-1).worker, 'a', 'to the idle worker, not the second slot of the busy one')
  compute(5)
  compute(6)
  t.same(posts.map(({ worker }) => worker), ['b', 'a', 'b', 'a', 'a'], 'the sixth waits: both hold two')
  answer('b')
  t.same(posts.at(-1), { worker: 'b', id: 5, num: 6 })
  t.same(await answers[0], { result: 1 })
})
