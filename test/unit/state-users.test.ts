/**
 * The state layer's users over the memory implementation, on a fake clock, with no sleep: the
 * webhook refresher (one fetch at a time per record, none lost, a dead holder taken over) and
 * the single flight across processes (one call, the others read what it stored; a holder that
 * died costs one wait, never a hang). Two refreshers or flight locks over one memory state stand
 * for two replicas over one Redis.
 */
import { describe, expect, it } from 'vitest';
import { LeaseFlightLock } from '../../src/cache/flight.ts';
import { memoryState } from '../../src/state/index.ts';
import { createRefresher } from '../../src/webhooks/refresh.ts';

/** A clock that moves only when something waits on it. */
function fakeClock() {
  let now = 1_700_000_000_000;
  return {
    now: () => now,
    pause: async (ms: number) => {
      now += ms;
      // Lets the other side of the test run between two looks.
      await new Promise((resolve) => setImmediate(resolve));
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** A fetch the test finishes when it wants. */
function gatedWork() {
  const started: number[] = [];
  const gates: Array<() => void> = [];
  return {
    started,
    work: (since: number) =>
      new Promise<void>((resolve) => {
        started.push(since);
        gates.push(resolve);
      }),
    finishNext: () => gates.shift()?.(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('webhook refresher over the memory state', () => {
  it('one fetch at a time; the notifications during a fetch cost one more, from the earliest', async () => {
    const clock = fakeClock();
    const refresher = createRefresher(5_000, memoryState(clock.now), clock);
    const fetches = gatedWork();
    const first = refresher.request('payment:A', 100, fetches.work);
    await tick();
    expect(fetches.started).toEqual([100]);
    // Three more arrive while the first fetch runs: they resolve at once, answered later.
    await refresher.request('payment:A', 300, fetches.work);
    await refresher.request('payment:A', 200, fetches.work);
    await refresher.request('payment:A', 400, fetches.work);
    expect(fetches.started).toEqual([100]);
    fetches.finishNext();
    await tick();
    await tick();
    expect(fetches.started).toEqual([100, 200]);
    fetches.finishNext();
    await first;
    expect(fetches.started).toEqual([100, 200]);
  });

  it('two replicas: the one that asked while the other fetched leaves it one more round, and fetches nothing itself', async () => {
    const clock = fakeClock();
    const state = memoryState(clock.now);
    const a = createRefresher(5_000, state, clock);
    const b = createRefresher(5_000, state, clock);
    const onA = gatedWork();
    const onB = gatedWork();
    const fromA = a.request('payment:B', 1, onA.work);
    await tick();
    expect(onA.started).toHaveLength(1);
    // B asks while A fetches: it waits for A to take its request.
    const fromB = b.request('payment:B', 2, onB.work);
    await tick();
    onA.finishNext();
    // A sees the request and fetches once more (its own `since`: the round it runs).
    for (let i = 0; i < 5 && onA.started.length < 2; i += 1) await tick();
    expect(onA.started).toHaveLength(2);
    await fromB;
    onA.finishNext();
    await fromA;
    expect(onB.started).toEqual([]);
    expect(await state.leases.look('webhook:payment:B')).toEqual({ held: false, asked: false });
  });

  it('a holder that died: the replica that asked takes the lease over once it lapses, not before', async () => {
    const clock = fakeClock();
    const state = memoryState(clock.now);
    // A replica took the lease and died mid-fetch.
    expect(await state.leases.take('webhook:payment:C', 1_000)).toBeDefined();
    const takenAt = clock.now();
    const refresher = createRefresher(1_000, state, clock);
    const fetches = gatedWork();
    let fetchedAt: number | undefined;
    const done = refresher.request('payment:C', 7, async (since) => {
      fetchedAt = clock.now();
      await fetches.work(since);
    });
    for (let i = 0; i < 2_000 && fetches.started.length === 0; i += 1) await tick();
    expect(fetches.started).toEqual([7]);
    expect(fetchedAt).toBeGreaterThanOrEqual(takenAt + 1_000);
    fetches.finishNext();
    await done;
  });
});

describe('single flight over the memory state', () => {
  const options = (clock: ReturnType<typeof fakeClock>) => ({
    holdMs: 3_000,
    waitMs: 2_000,
    pollMs: 25,
    now: clock.now,
    pause: clock.pause,
  });

  it('of two processes missing one key, one calls the upstream and the other reads what it stored', async () => {
    const clock = fakeClock();
    const state = memoryState(clock.now);
    const a = new LeaseFlightLock(state, options(clock));
    const b = new LeaseFlightLock(state, options(clock));
    let stored: string | undefined;
    let calls = 0;
    let finish: (() => void) | undefined;
    const work = () =>
      new Promise<string>((resolve) => {
        calls += 1;
        finish = () => {
          stored = 'record';
          resolve('record');
        };
      });
    const read = async () => stored;
    const first = a.run('tx:1', work, read);
    await tick();
    const second = b.run('tx:1', work, read);
    await tick();
    finish?.();
    expect(await first).toBe('record');
    expect(await second).toBe('record');
    expect(calls).toBe(1);
  });

  it('a holder that died costs a wait up to the budget, then the waiter calls the upstream itself', async () => {
    const clock = fakeClock();
    const state = memoryState(clock.now);
    expect(await state.leases.take('flight:tx:2', 60_000)).toBeDefined();
    const lock = new LeaseFlightLock(state, options(clock));
    const start = clock.now();
    let calledAt: number | undefined;
    const value = await lock.run(
      'tx:2',
      async () => {
        calledAt = clock.now();
        return 'fetched';
      },
      async () => undefined,
    );
    expect(value).toBe('fetched');
    expect(calledAt).toBeGreaterThanOrEqual(start + 2_000);
  });

  it('a lease given back without a value is taken by the next waiter, who calls once', async () => {
    const clock = fakeClock();
    const state = memoryState(clock.now);
    const held = await state.leases.take('flight:tx:3', 60_000);
    const lock = new LeaseFlightLock(state, options(clock));
    let calls = 0;
    const waiting = lock.run(
      'tx:3',
      async () => {
        calls += 1;
        return 'mine';
      },
      async () => undefined,
    );
    await tick();
    await held?.release();
    expect(await waiting).toBe('mine');
    expect(calls).toBe(1);
  });
});
