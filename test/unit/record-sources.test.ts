/**
 * The record sources (src/cache/sources.ts) over the memory state, on a fake wall clock (only
 * `Date` is faked: the upstream is a real HTTP server on loopback, its timers real), with no
 * sleep: what a cached read serves and when it asks again, that a read bypassing the cache asks
 * the service and its answer is what later reads serve, that an older read finishing last does
 * not overwrite a newer one, and that two processes over one shared state missing one record
 * together make one upstream call.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaseFlightLock } from '../../src/cache/flight.ts';
import { createSources, type RecordSources } from '../../src/cache/sources.ts';
import { RecordCache } from '../../src/cache/store.ts';
import { loadConfig } from '../../src/config.ts';
import { memoryState, type SharedState } from '../../src/state/index.ts';
import { KycClient, PaymentClient } from '../../src/upstream/clients.ts';
import { type Fixture, startFixture, transactionBody } from '../helpers/fixture.ts';

const config = loadConfig({});
const policy = config.cache;
const TX = 'NT-SOURCE1';

/** What the payment service says now, and how long it takes to say it. */
let status = 'SUCCESSFUL';
let delays: number[] = [];
let payment: Fixture;

beforeAll(async () => {
  payment = await startFixture(() => ({
    body: transactionBody({ txStatus: status }, `PAYMENT_${status}`),
    delayMs: delays.shift() ?? 0,
  }));
});

afterAll(async () => {
  await payment?.close();
});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-01-05T12:00:00Z'));
  status = 'SUCCESSFUL';
  delays = [];
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
): RecordSources {
  const upstream = { ...config.upstream, maxAttempts: 1 };
  return createSources({
    payment: new PaymentClient({ baseUrl: payment.url, accessToken: 'test-token' }, upstream),
    kyc: new KycClient(
      {
        baseUrl: payment.url,
        secretKey: 'test-secret',
        publicKey: 'pk',
        businessSlug: 'shop',
        sdkScriptUrl: 'http://127.0.0.1/sdk.js',
      },
      upstream,
    ),
    cache,
    policy,
    businessSlug: 'shop',
    ...(state.shared && {
      flightLock: new LeaseFlightLock(state, { holdMs: 6_000, waitMs: 5_000, pollMs: 5 }),
    }),
  });
}

const calls = () => payment.requests.length;

/**
 * One turn of the event loop: a finished read's flight stays open for the rest of its turn (a
 * request that missed in that turn joins it), as it does between requests in a real process.
 */
const turn = () => new Promise((resolve) => setImmediate(resolve));

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
      payment.setHandler(() => ({
        body: transactionBody({ txStatus: status }, `PAYMENT_${status}`),
        delayMs: delays.shift() ?? 0,
      }));
    }
  });
});
