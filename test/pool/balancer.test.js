import { test } from 'tap'
import { Balancer } from '../../src/pool/balancer.js'

// Piscina's view of a worker: its id and how many tasks it runs (a single abortable task counts
// as Infinity in Piscina, with isRunningAbortableTask set). A task handed behind another carries
// no signal: `abortable` false is one such task running alone.
const worker = (id, tasks, abortable = tasks === 1) => ({ id, currentUsage: abortable ? Infinity : tasks, isRunningAbortableTask: abortable })

// A balancer on a clock the test moves, and a hand-over through it to Piscina's `workers`.
function setup () {
  const clock = { ms: 1000 }
  const balancer = new Balancer({ now: () => clock.ms })
  const place = (workers, costMs = 1, behind = undefined) => balancer.place(() => balancer.balance({}, workers), costMs, behind)
  return { balancer, clock, place }
}

test('an idle thread is chosen first, and counted as holding the task', async (t) => {
  const { balancer, place } = setup()
  const { thread } = place([worker(1, 1), worker(2, 0)])
  t.equal(thread, 2)
  t.equal(balancer.idle(2), 1, 'thread 2 holds it; the pool has seen nothing on thread 1')
  balancer.settled(thread)
  t.equal(balancer.idle(2), 2)
})

test('a thread holds tasks from their hand-over until the last of them settles', async (t) => {
  const { balancer, place } = setup()
  t.notOk(balancer.holds(2))
  place([worker(1, 1), worker(2, 0)])
  place([worker(1, 1), worker(2, 1)], 1, 2)
  balancer.settled(2)
  t.ok(balancer.holds(2), 'one of its two tasks is left')
  balancer.settled(2)
  t.notOk(balancer.holds(2))
})

test('a busy thread takes a second task only when the pool names it', async (t) => {
  const { balancer, place } = setup()
  const workers = [worker(1, 1), worker(2, 2), worker(3, 1)]
  t.equal(place(workers).thread, undefined, 'none named: no thread')
  t.equal(balancer.idle(3), 2, 'the unplaced task is counted as taking a thread')
  t.equal(place(workers, 1, 3).thread, 3, 'the named thread, with one task')
  t.equal(place(workers, 1, 2).thread, undefined, 'never a thread with two')
})

test('a thread whose one task carries no signal (it waited behind another, which has ended) takes a second task too', async (t) => {
  const { place } = setup()
  t.equal(place([worker(1, 1, false), worker(2, 2)], 1, 1).thread, 1)
  t.equal(place([worker(1, 2), worker(2, 2)], 1, 1).thread, undefined, 'not once it holds two without signals')
})

test('a busy thread is offered for a second task only while its task is sure to end by the limit, even at half its predicted speed; the soonest first', async (t) => {
  const { balancer, clock, place } = setup()
  place([worker(1, 0)], 40) // thread 1: done at 1040, 1080 at half speed
  const first = place([worker(1, 1), worker(2, 0)], 3) // thread 2: done at 1003, 1006
  place([worker(1, 1), worker(2, 1), worker(3, 0)], 20) // thread 3: done at 1020, 1040
  t.equal(balancer.endingBy(1005), undefined, 'none surely ends by 1005: thread 2\'s 3 ms task may take 6')
  t.equal(balancer.endingBy(1006), 2)
  t.equal(balancer.endingBy(2000), 2, 'all do: the one predicted to end first, neither the first nor the last handed work')
  clock.ms = 1001
  t.equal(place([worker(1, 1), worker(2, 1), worker(3, 1)], 2, 2).thread, 2, 'a second task on thread 2, behind 2 ms of the first')
  t.equal(balancer.endingBy(2000), 3, 'thread 2 holds two tasks: it is not offered')
  balancer.settled(first.thread)
  t.equal(balancer.endingBy(1006), undefined, 'thread 2 now runs the second task: done at 1005, 1007 at half speed')
  t.equal(balancer.endingBy(1007), 2)
})

test('a dear task near its predicted end is no place to wait: it may run far past it', async (t) => {
  const { balancer, clock, place } = setup()
  place([worker(1, 0)], 60) // done at 1060 as predicted, 1120 at half speed
  clock.ms = 1058
  t.equal(balancer.endingBy(clock.ms, 5), undefined, '2 ms before its predicted end')
  clock.ms = 1090
  t.equal(balancer.endingBy(clock.ms, 5), undefined, '30 ms past it')
  t.equal(balancer.endingBy(1109, 5), undefined)
  t.equal(balancer.endingBy(1110, 5), 1, 'within 10 ms of its end at half speed')
})

test('a thread\'s predicted end runs from when it is handed work, and is forgotten when it is idle', async (t) => {
  const { balancer, clock, place } = setup()
  const late = place([worker(7, 0)], 10)
  clock.ms = 1500 // the task is late: predicted to end by 1010, by 1020 at half speed
  t.equal(balancer.endingBy(1019), undefined)
  t.equal(balancer.endingBy(1020), 7)
  balancer.settled(late.thread)
  t.equal(balancer.endingBy(Infinity), undefined, 'an idle thread is not offered as busy')
  const early = place([worker(7, 0)], 100)
  t.equal(balancer.endingBy(1699), undefined, 'its new task ends at 1600, 1700 at half speed, not 1110')
  t.equal(balancer.endingBy(1700), 7)
  clock.ms = 1510 // done 90 ms early
  balancer.settled(early.thread)
  place([worker(7, 0)], 10)
  t.equal(balancer.endingBy(1530), 7, 'the next task ends at 1520, 1530 at half speed, not behind the 1600 of the last')
})

test('a thread holding two tasks is idle only once both settle', async (t) => {
  const { balancer, place } = setup()
  const first = place([worker(7, 0)])
  const second = place([worker(7, 1)], 1, 7)
  t.same([first.thread, second.thread], [7, 7])
  t.equal(balancer.idle(1), 0)
  balancer.settled(first.thread)
  t.equal(balancer.idle(1), 0)
  balancer.settled(second.thread)
  t.equal(balancer.idle(1), 1)
})

test('a task Piscina keeps for later goes to an idle thread, not to the busy one named for it', async (t) => {
  const { balancer } = setup()
  const kept = balancer.place(() => null, 1, 4) // no thread ready: no balance() call
  t.equal(kept.thread, undefined)
  t.equal(balancer.balance({}, [worker(4, 1)]), null, 'Piscina offers it later: the busy thread is no longer named')
})

test('a task placed while no thread was ready frees its place when it settles', async (t) => {
  const { balancer } = setup()
  const { thread } = balancer.place(() => null, 1) // Piscina kept it: no balance() call
  t.equal(thread, undefined)
  t.equal(balancer.idle(1), 0)
  balancer.settled(thread)
  t.equal(balancer.idle(1), 1)
})

test('two tasks placed while no thread was ready free both places once settled', async (t) => {
  const { balancer } = setup()
  const placed = [balancer.place(() => null, 1), balancer.place(() => null, 1)]
  t.equal(balancer.idle(2), 0)
  for (const { thread } of placed) balancer.settled(thread)
  t.equal(balancer.idle(2), 2)
})

test('a task placed behind a busy thread goes there even while another thread is idle (the express thread)', async (t) => {
  const { balancer, place } = setup()
  t.equal(place([worker(1, 0), worker(2, 1)], 1, 2).thread, 2)
  t.equal(balancer.running, 1, 'one thread holds the pool\'s tasks')
  t.equal(place([worker(1, 0), worker(2, 0)], 1, 2).thread, 2, 'or there once that thread is idle')
})

test('the soonest predicted end of any busy thread\'s work, Infinity with none busy', async (t) => {
  const { balancer, place } = setup()
  t.equal(balancer.soonestEnd(), Infinity)
  const long = place([worker(1, 0)], 40) // done at 1040
  place([worker(1, 1), worker(2, 0)], 30) // done at 1030
  t.equal(balancer.soonestEnd(), 1030)
  t.equal(balancer.running, 2)
  place([worker(1, 1), worker(2, 1)], 20, 1) // behind thread 1: done at 1060
  t.equal(balancer.soonestEnd(), 1030, 'a thread holding two tasks counts the end of both')
  t.equal(balancer.running, 2, 'each thread runs one task, whatever it holds')
  balancer.settled(long.thread)
  t.equal(balancer.soonestEnd(), 1030)
})

test('what waits for the task a thread runs now is called once that task settles, or at once on an idle thread', async (t) => {
  const { balancer, place } = setup()
  const calls = []
  balancer.afterCurrent(1, () => calls.push('idle'))
  t.same(calls, ['idle'], 'a thread running nothing: at once')
  const first = place([worker(1, 0)])
  balancer.afterCurrent(1, () => calls.push('a'))
  balancer.afterCurrent(1, () => calls.push('b'))
  const second = place([worker(1, 1)], 1, 1)
  t.equal(calls.length, 1, 'not while the first runs')
  balancer.settled(first.thread)
  t.same(calls.slice(1), ['a', 'b'], 'each once, when the first settles')
  balancer.settled(second.thread)
  t.equal(calls.length, 3, 'and never again')
})

test('a busy thread opens for a second task when its one task comes within the limit of its predicted end, and within twice the limit of its end at half speed', async (t) => {
  const { balancer, clock, place } = setup()
  t.equal(balancer.opensAt(5), Infinity, 'no thread busy')
  place([worker(1, 0)], 20) // handed at 1000, done at 1020, 1040 at half speed
  clock.ms = 1001
  place([worker(1, 1), worker(2, 0)], 3) // handed at 1001, done at 1004, 1007 at half speed
  t.equal(balancer.opensAt(5), 999, 'thread 2, 5 ms before its predicted end: a cheap task opens as it would without the second bound')
  place([worker(1, 1), worker(2, 1)], 1, 2)
  t.equal(balancer.opensAt(5), 1030, 'thread 2 holds two tasks: thread 1, 10 ms before 1040')
})

test('a thread the pool excepts is neither offered nor waited for (the express thread, for a task that could not go there)', async (t) => {
  const { balancer, place } = setup()
  place([worker(1, 0)], 20) // done at 1020, 1040 at half speed
  place([worker(1, 1), worker(2, 0)], 3) // done at 1003, 1006
  t.equal(balancer.endingBy(2000, 5), 2)
  t.equal(balancer.endingBy(2000, 5, 2), 1, 'thread 2 ends first, but is excepted')
  t.equal(balancer.endingBy(1029, 5, 2), undefined, 'thread 1 is not open yet')
  t.equal(balancer.opensAt(5, 2), 1030)
  t.equal(balancer.opensAt(5, 1), 998, 'thread 2 for a task that may wait on either')
})
