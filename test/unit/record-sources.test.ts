/**
 * The record sources (src/cache/sources.ts) over the memory state, on a fake wall clock (only
 * `Date` is faked: the upstream is a real HTTP server on loopback, its timers real), with no
 * sleep: what a cached read serves and when it asks again, that a read bypassing the cache asks
 * the service and its answer is what later reads serve, that an older read finishing last does
 * not overwrite a newer one, that two processes over one shared state missing one record
 * together make one upstream call, and that a call waiting in the caller's share or in the
 * upstream's cap, or a retry, is made only while a request still waits for it.
 */
import { getEventListeners } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RecordSources } from '../../src/cache/sources.ts';
import { RecordCache } from '../../src/cache/store.ts';
import { loadConfig, type UpstreamPolicyConfig } from '../../src/config.ts';
import { memoryState, type SharedState } from '../../src/state/index.ts';
import { stopEnd } from '../../src/transports/io.ts';
import { CallerShare } from '../../src/upstream/caller-share.ts';
import { type Fixture, startFixture, transactionBody } from '../helpers/fixture.ts';
import { testSources } from '../helpers/sources.ts';

const config = loadConfig({});
const policy = config.cache;
const TX = 'NT-SOURCE1';

/** What the payment service says now, and how long it takes to say it. */
let status = 'SUCCESSFUL';
let delays: number[] = [];
let payment: Fixture;

beforeAll(async () => {
  payment = await startFixture(answerStatus);
});

afterAll(async () => {
  await payment?.close();
});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-01-05T12:00:00Z'));
  status = 'SUCCESSFUL';
  delays = [];
  payment.setHandler(answerStatus);
  payment.requests.length = 0;
});

afterEach(() => {
  vi.useRealTimers();
});

/**
 * One process's sources over `state` and its record store `cache` (a second one over the same
 * state and store: another replica over one Redis).
 */
function sources(
  state: SharedState,
  cache: RecordCache = new RecordCache(state.records(policy)),
  upstream: Partial<UpstreamPolicyConfig> = {},
): RecordSources {
  return testSources({
    baseUrl: payment.url,
    state,
    cache,
    upstream,
    flight: { holdMs: 6_000, waitMs: 5_000, pollMs: 5 },
  });
}

const calls = () => payment.requests.length;

/** What the service answers by default: the record of `status`, after the next delay. */
const answerStatus = () => ({
  body: transactionBody({ txStatus: status }, `PAYMENT_${status}`),
  delayMs: delays.shift() ?? 0,
});

/**
 * The service answers each reference with its own record, and holds the answer for `txRef`
 * until `release` (then answers it `heldStatus`, when given); `first` resolves when the first
 * call has arrived.
 */
function holding(
  txRef: string,
  heldStatus?: number,
): { first: Promise<void>; release: () => void } {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived = () => {};
  const first = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  payment.setHandler((request) => {
    arrived();
    if (!request.path.endsWith(txRef)) {
      return { body: transactionBody({ paymentRef: request.path.split('/').pop() }) };
    }
    return heldStatus === undefined
      ? { body: transactionBody({ paymentRef: txRef }), until: held }
      : { status: heldStatus, body: { error: true }, until: held };
  });
  return { first, release };
}

/**
 * One turn of the event loop: a finished read's flight stays open for the rest of its turn (a
 * request that missed in that turn joins it), as it does between requests in a real process.
 */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The gate of one service caller's reads, through `share`. */
const gateOf =
  (share: CallerShare) =>
  <T>(upstream: 'payment' | 'kyc', work: () => Promise<T>, gone?: () => boolean) =>
    share.run('caller', 'service', upstream, work, gone);

describe('record sources over the memory state', () => {
  it('a cached read serves the stored record until its TTL, then asks again', async () => {
    status = 'PENDING';
    const read = sources(memoryState());
    expect((await read.transaction(TX))?.status).toBe('PENDING');
    expect(calls()).toBe(1);
    status = 'SUCCESSFUL';
    // Within the pending TTL: the stored record, no call.
    vi.setSystemTime(Date.now() + (policy.ttlPendingSeconds * 1000 - 1));
    await turn();
    expect((await read.transaction(TX))?.status).toBe('PENDING');
    expect(calls()).toBe(1);
    // Past it: asked again, and the new status is served.
    vi.setSystemTime(Date.now() + 2);
    await turn();
    expect((await read.transaction(TX))?.status).toBe('SUCCESSFUL');
    expect(calls()).toBe(2);
  });

  it('a read that bypasses the cache asks the service, and what it read is what cached reads serve', async () => {
    const read = sources(memoryState());
    expect((await read.transaction(TX))?.status).toBe('SUCCESSFUL');
    // Final: cached for a day. The payment is reversed meanwhile.
    status = 'REVERSED';
    expect((await read.transaction(TX))?.status).toBe('SUCCESSFUL');
    expect(calls()).toBe(1);
    const fresh = await read.transaction(TX, { bypassCache: true });
    expect(fresh?.status).toBe('UNKNOWN');
    expect(fresh?.rawStatus).toBe('REVERSED');
    expect(calls()).toBe(2);
    // The fresh read stands for every later cached read.
    expect((await read.transaction(TX))?.rawStatus).toBe('REVERSED');
    expect(calls()).toBe(2);
  });

  it('a read that began earlier and ends later does not overwrite a newer one', async () => {
    const read = sources(memoryState());
    status = 'PENDING';
    // The first (bypassing) read is slow; it began before the second.
    delays = [300, 0];
    const slow = read.transaction(TX, { bypassCache: true });
    await vi.waitFor(() => expect(calls()).toBe(1));
    vi.setSystemTime(Date.now() + 10);
    status = 'SUCCESSFUL';
    const quick = await read.transaction(TX, { bypassCache: true });
    expect(quick?.status).toBe('SUCCESSFUL');
    // The slow read answers its own caller what it read...
    expect((await slow)?.status).toBe('PENDING');
    // ...but the record that stands is the one whose read began later.
    expect((await read.transaction(TX))?.status).toBe('SUCCESSFUL');
    expect(calls()).toBe(2);
  });

  it('two processes over one shared state missing one record make one upstream call', async () => {
    const state = memoryState();
    // The memory state and one record store stand for Redis here: shared by the two.
    const shared: SharedState = { ...state, shared: true };
    const store = new RecordCache(state.records(policy));
    const a = sources(shared, store);
    const b = sources(shared, store);
    delays = [100];
    const [first, second] = await Promise.all([a.transaction(TX), b.transaction(TX)]);
    expect(first?.status).toBe('SUCCESSFUL');
    expect(second?.status).toBe('SUCCESSFUL');
    expect(calls()).toBe(1);
  });

  it('an unknown reference is remembered for its TTL; a bypassing read still asks', async () => {
    const read = sources(memoryState());
    payment.setHandler(() => ({ status: 404, body: { message: 'Transaction not found' } }));
    try {
      expect(await read.transaction(TX)).toBeNull();
      expect(await read.transaction(TX)).toBeNull();
      expect(calls()).toBe(1);
      expect(await read.transaction(TX, { bypassCache: true })).toBeNull();
      expect(calls()).toBe(2);
    } finally {
      payment.setHandler(answerStatus);
    }
  });

  it('a waiting call is dropped when its turn comes if every request waiting for it has ended; one in flight is made and stored', async () => {
    const read = sources(memoryState());
    // One call at a time for the caller; the first one is held by the service until released.
    const share = new CallerShare({ endUser: 1, service: 1 }, 10);
    const gate = gateOf(share);
    const { first, release } = holding('NT-HELD1');
    const x = new AbortController();
    const y = new AbortController();
    const z = new AbortController();
    const inFlight = read.transaction('NT-HELD1', { gate, end: stopEnd(x) });
    await first;
    // Queued behind it: one record X and Y wait for, one X and Z wait for (single flight).
    const sharedByXY = [
      read.transaction('NT-SHARED1', { gate, end: stopEnd(x) }),
      read.transaction('NT-SHARED1', { gate, end: stopEnd(y) }),
    ];
    const sharedByXZ = [
      read.transaction('NT-GONE1', { gate, end: stopEnd(x) }),
      read.transaction('NT-GONE1', { gate, end: stopEnd(z) }),
    ];
    // Each read has looked at the cache and joined its flight.
    await turn();
    x.abort();
    z.abort();
    release();
    expect((await inFlight)?.txRef).toBe('NT-HELD1');
    // Y still waits for SHARED1: made. Nobody waits for GONE1 when its turn comes: dropped.
    expect((await Promise.all(sharedByXY)).map((record) => record?.txRef)).toEqual([
      'NT-SHARED1',
      'NT-SHARED1',
    ]);
    for (const gone of await Promise.allSettled(sharedByXZ)) {
      expect(gone.status === 'rejected' && gone.reason).toBeInstanceOf(DOMException);
    }
    // A request arriving now starts a read of its own instead of joining the dropped one.
    const later = read.transaction('NT-GONE1', {
      gate,
      end: stopEnd(new AbortController()),
    });
    expect((await later)?.txRef).toBe('NT-GONE1');
    expect(payment.requests.map((request) => request.path.split('/').pop())).toEqual([
      'NT-HELD1',
      'NT-SHARED1',
      'NT-GONE1',
    ]);
    // The call in flight when its request ended was stored.
    await turn();
    expect((await read.transaction('NT-HELD1'))?.txRef).toBe('NT-HELD1');
    expect(calls()).toBe(3);
    expect(share.callers).toBe(0);
  });

  it("calls that waited in the caller's queue and at the cap look at their requests' ends: no signal is made, none listened to", async () => {
    const read = sources(memoryState(), undefined, { maxConcurrent: 1, maxQueued: 10 });
    const share = new CallerShare({ endUser: 1, service: 1 }, 10);
    const gate = gateOf(share);
    // A request's end that counts how often it is looked at and how often its signal is asked for.
    const looks = { gone: 0, signals: 0 };
    const counted = () => ({
      gone: () => {
        looks.gone += 1;
        return false;
      },
      abandoned: () => {
        looks.signals += 1;
        return new AbortController().signal;
      },
    });
    const { first, release } = holding('NT-LOOK1');
    const inFlight = read.transaction('NT-LOOK1', { gate, end: counted() });
    await first;
    // Behind it in the caller's queue (another caller's read waits at the cap meanwhile).
    const waited = read.transaction('NT-LOOK2', { gate, end: counted() });
    const atCap = read.transaction('NT-LOOK3', { end: counted() });
    await turn();
    release();
    expect((await Promise.all([inFlight, waited, atCap])).map((record) => record?.txRef)).toEqual([
      'NT-LOOK1',
      'NT-LOOK2',
      'NT-LOOK3',
    ]);
    // Each waiting call looked when its turn came; nothing asked for a signal.
    expect(looks.gone).toBeGreaterThanOrEqual(2);
    expect(looks.signals).toBe(0);
  });

  it('a request that joins a waiting read its first requests have left keeps the call wanted', async () => {
    const read = sources(memoryState());
    const share = new CallerShare({ endUser: 1, service: 1 }, 10);
    const gate = gateOf(share);
    const { first, release } = holding('NT-HELD2');
    const x = new AbortController();
    const inFlight = read.transaction('NT-HELD2', { gate });
    await first;
    const left = read.transaction('NT-JOINED2', { gate, end: stopEnd(x) });
    await turn();
    x.abort();
    // Another request joins the same read before its turn: the call is made for it.
    const joined = read.transaction('NT-JOINED2', {
      gate,
      end: stopEnd(new AbortController()),
    });
    release();
    expect((await inFlight)?.txRef).toBe('NT-HELD2');
    expect((await joined)?.txRef).toBe('NT-JOINED2');
    expect((await left)?.txRef).toBe('NT-JOINED2');
    expect(calls()).toBe(2);
  });

  it('a retry is not made once no request waits for the read', async () => {
    const read = sources(memoryState(), undefined, { maxAttempts: 2 });
    // The service holds its answer, then says 503 (which is retried).
    const { first, release } = holding('NT-RETRY1', 503);
    const x = new AbortController();
    const gone = read.transaction('NT-RETRY1', { end: stopEnd(x) });
    await first;
    x.abort();
    release();
    await expect(gone).rejects.toBeInstanceOf(DOMException);
    expect(calls()).toBe(1);
  });

  it("a call waiting for a slot of the upstream's cap is dropped once no request waits for it; the one in flight is made and stored", async () => {
    // One call in flight for the whole upstream, the others in its queue; no caller share.
    const read = sources(memoryState(), undefined, { maxConcurrent: 1, maxQueued: 10 });
    const { first, release } = holding('NT-BULK1');
    const x = new AbortController();
    const y = new AbortController();
    const z = new AbortController();
    const inFlight = read.transaction('NT-BULK1', { end: stopEnd(x) });
    await first;
    // Queued behind it at the cap: one record Y alone waits for, one X and Z wait for.
    const gone = read.transaction('NT-BGONE1', { end: stopEnd(y) });
    const kept = [
      read.transaction('NT-BKEPT1', { end: stopEnd(x) }),
      read.transaction('NT-BKEPT1', { end: stopEnd(z) }),
    ];
    await turn();
    // X's request ends too: its call in flight is made all the same, and Z still waits.
    x.abort();
    y.abort();
    release();
    expect((await inFlight)?.txRef).toBe('NT-BULK1');
    await expect(gone).rejects.toBeInstanceOf(DOMException);
    expect((await kept[1])?.txRef).toBe('NT-BKEPT1');
    expect(payment.requests.map((request) => request.path.split('/').pop())).toEqual([
      'NT-BULK1',
      'NT-BKEPT1',
    ]);
    // The call in flight when its request ended was stored.
    await turn();
    expect((await read.transaction('NT-BULK1'))?.txRef).toBe('NT-BULK1');
    expect(calls()).toBe(2);
  });

  it("a call that waits for a slot of the upstream's cap listens to none of its requests, neither waiting nor once its turn has come", async () => {
    const read = sources(memoryState(), undefined, { maxConcurrent: 1, maxQueued: 10 });
    // Every answer held until the test lets it go; each arrival awaited, no clock.
    const answers = new Map<string, () => void>();
    const arrived: string[] = [];
    let onArrival = () => {};
    const arrival = () =>
      new Promise<void>((resolve) => {
        onArrival = resolve;
      });
    payment.setHandler((request) => {
      const txRef = request.path.split('/').pop() ?? '';
      arrived.push(txRef);
      onArrival();
      const until = new Promise<void>((resolve) => answers.set(txRef, resolve));
      return { body: transactionBody({ paymentRef: txRef }), until };
    });
    try {
      const x = new AbortController();
      const y = new AbortController();
      const firstArrived = arrival();
      const inFlight = read.transaction('NT-CAP2A', { end: stopEnd(x) });
      await firstArrived;
      expect(arrived).toEqual(['NT-CAP2A']);
      // Queued at the cap, wanted by X and Y.
      const waited = [
        read.transaction('NT-CAP2B', { end: stopEnd(x) }),
        read.transaction('NT-CAP2B', { end: stopEnd(y) }),
      ];
      await turn();
      expect(getEventListeners(x.signal, 'abort')).toEqual([]);
      expect(getEventListeners(y.signal, 'abort')).toEqual([]);
      const secondArrived = arrival();
      answers.get('NT-CAP2A')?.();
      expect((await inFlight)?.txRef).toBe('NT-CAP2A');
      // Its turn came: it asked whether X or Y still waits, and listens to neither in flight.
      await secondArrived;
      expect(arrived).toEqual(['NT-CAP2A', 'NT-CAP2B']);
      expect(getEventListeners(x.signal, 'abort')).toEqual([]);
      expect(getEventListeners(y.signal, 'abort')).toEqual([]);
      answers.get('NT-CAP2B')?.();
      expect((await Promise.all(waited)).map((record) => record?.txRef)).toEqual([
        'NT-CAP2B',
        'NT-CAP2B',
      ]);
      expect(calls()).toBe(2);
    } finally {
      payment.setHandler(answerStatus);
    }
  });
});
