/**
 * The state layer's contract, one suite run against both implementations: this process's memory
 * (on an injected clock) and a real redis-server (expiry on Redis's clock: a lapse there is a
 * short real wait past the hold, never an assertion on a margin). Leases that lapse and are taken
 * over, a lease given back only by its holder, the "asked again" round, versioned writes racing,
 * set-once under 50 concurrent callers, bounded sets whose members lapse, token buckets and
 * fixed windows, sealed channels (a forged or tampered message is dropped and counted), and Redis failing mid-operation (the server stopped):
 * the caller acts locally and the failure is counted. On Redis alone, the claims' set-once store
 * with its ledger: one setter of 50, and a store emptied under it found lost until acknowledged.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LiveMessage, LiveMessages, type RejectReason } from '../../src/live/messages.ts';
import { SealedChannels } from '../../src/state/channel.ts';
import { RedisLedger } from '../../src/state/claims.ts';
import { memoryState, redisState, type SharedState } from '../../src/state/index.ts';
import {
  MemoryVersionedStore,
  RedisVersionedStore,
  type Versioned,
  type VersionedStore,
} from '../../src/state/records.ts';
import { RedisConnection, RedisUnavailableError } from '../../src/state/redis.ts';
import {
  skipRedisClusterTests,
  skipRedisTests,
  startRedis,
  startRedisCluster,
  startRedisSentinel,
  type TestRedis,
  type TestRedisCluster,
  type TestRedisSentinel,
} from '../helpers/redis.ts';

interface Entry extends Versioned {
  value: string;
}

interface Implementation {
  state: SharedState;
  records: VersionedStore<Entry>;
  /** Lets `ms` pass for what the store holds. */
  lapse(ms: number): Promise<void>;
}

/** Unique names per test: both implementations keep what earlier tests left. */
let counter = 0;
function fresh(what: string): string {
  counter += 1;
  return `${what}:${Date.now()}:${counter}`;
}

function contract(name: string, make: () => Implementation) {
  describe(`${name}: leases`, () => {
    it('one holder at a time; given back, it can be taken again', async () => {
      const { state } = make();
      const lease = fresh('lease');
      const first = await state.leases.take(lease, 10_000);
      expect(first).toBeDefined();
      expect(await state.leases.take(lease, 10_000)).toBeUndefined();
      expect((await state.leases.look(lease)).held).toBe(true);
      await first?.release();
      expect((await state.leases.look(lease)).held).toBe(false);
      expect(await state.leases.take(lease, 10_000)).toBeDefined();
    });

    it('a lease that lapses is taken over, and its old holder can neither renew nor release it', async () => {
      const { state, lapse } = make();
      const lease = fresh('lease');
      const old = await state.leases.take(lease, 100);
      expect(old).toBeDefined();
      await lapse(150);
      const taker = await state.leases.take(lease, 10_000);
      expect(taker).toBeDefined();
      expect(await old?.renew(10_000)).toBe(false);
      await old?.release();
      // Still the taker's.
      expect(await state.leases.take(lease, 10_000)).toBeUndefined();
      expect(await taker?.renew(10_000)).toBe(true);
    });

    it('a renewed lease outlives its first hold', async () => {
      const { state, lapse } = make();
      const lease = fresh('lease');
      const held = await state.leases.take(lease, 300);
      expect(await held?.renew(10_000)).toBe(true);
      await lapse(400);
      expect(await state.leases.take(lease, 10_000)).toBeUndefined();
    });

    it('asked again during a round, the holder keeps the lease for one more; then gives it back', async () => {
      const { state } = make();
      const lease = fresh('lease');
      await state.leases.ask(lease, 10_000);
      const held = await state.leases.take(lease, 10_000);
      if (!held) throw new Error('not taken');
      await held.beginRound();
      expect((await state.leases.look(lease)).asked).toBe(false);
      await state.leases.ask(lease, 10_000);
      expect(await held.releaseUnlessAsked(10_000)).toBe(false);
      expect((await state.leases.look(lease)).held).toBe(true);
      await held.beginRound();
      expect(await held.releaseUnlessAsked(10_000)).toBe(true);
      expect(await state.leases.look(lease)).toEqual({ held: false, asked: false });
    });

    it('of 50 callers at once, exactly one takes a lease', async () => {
      const { state } = make();
      const lease = fresh('lease');
      const taken = await Promise.all(
        Array.from({ length: 50 }, () => state.leases.take(lease, 10_000)),
      );
      expect(taken.filter(Boolean)).toHaveLength(1);
    });
  });

  describe(`${name}: set-once`, () => {
    it('of 50 concurrent callers exactly one is first; after the expiry, one again', async () => {
      const { state, lapse } = make();
      const key = fresh('once');
      const claims = await Promise.all(
        Array.from({ length: 50 }, () => state.once.first(key, 200)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await state.once.first(key, 200)).toBe(false);
      await lapse(300);
      const again = await Promise.all(
        Array.from({ length: 50 }, () => state.once.first(key, 10_000)),
      );
      expect(again.filter(Boolean)).toHaveLength(1);
    });
  });

  describe(`${name}: lapsing sets`, () => {
    it('of 50 concurrent adds to a set bounded at 3, three get in; a removed or lapsed member frees its place', async () => {
      const { state, lapse } = make();
      const set = fresh('set');
      const added = await Promise.all(
        Array.from({ length: 50 }, (_, i) => state.lapsing.add(set, `m${i}`, 200, 3)),
      );
      expect(added.filter(Boolean)).toHaveLength(3);
      expect(await state.lapsing.count(set)).toBe(3);
      const members = added.flatMap((ok, i) => (ok ? [`m${i}`] : []));
      await state.lapsing.remove(set, members[0] ?? '');
      expect(await state.lapsing.add(set, 'late', 10_000, 3)).toBe(true);
      expect(await state.lapsing.add(set, 'later', 10_000, 3)).toBe(false);
      // A renewed member stays; the others lapse.
      await state.lapsing.renew(set, members[1] ?? '', 10_000);
      await lapse(300);
      expect(await state.lapsing.count(set)).toBe(2);
      expect(await state.lapsing.add(set, 'again', 10_000, 3)).toBe(true);
      expect(await state.lapsing.add(set, 'over', 10_000, 3)).toBe(false);
    });
  });

  describe(`${name}: quotas`, () => {
    it('a token bucket allows its burst, then refuses with the wait, and refills', async () => {
      const { state, lapse } = make();
      const buckets = state.buckets({ rps: 5, burst: 3 });
      const key = fresh('bucket');
      const takes = await Promise.all(Array.from({ length: 10 }, () => buckets.take(key)));
      expect(takes.filter((take) => take.allowed)).toHaveLength(3);
      expect(takes.find((take) => !take.allowed)?.retryAfterSeconds).toBe(1);
      await lapse(450);
      expect((await buckets.take(key)).allowed).toBe(true);
    });

    it('a fixed window counts 50 concurrent takes across its callers, and starts again after it', async () => {
      const { state, lapse } = make();
      const windows = state.windows(300, 4);
      const key = fresh('window');
      const takes = await Promise.all(Array.from({ length: 50 }, () => windows.take(key)));
      expect(takes.filter(Boolean)).toHaveLength(4);
      await lapse(400);
      expect(await windows.take(key)).toBe(true);
    });
  });

  describe(`${name}: sealed channels`, () => {
    it('delivers what was sealed for the channel; a forged, altered or moved message is dropped and counted', async () => {
      const { state } = make();
      const rejected: RejectReason[] = [];
      const keys = { key: randomBytes(32), oldKeys: [] };
      const channels = new SealedChannels<LiveMessage>(
        state.channels,
        new LiveMessages(keys, (reason) => rejected.push(reason)),
      );
      const channel = fresh('contract:live:events');
      const other = fresh('contract:live:events');
      const received: LiveMessage[] = [];
      const stop = await channels.subscribe(channel, (message) => received.push(message));
      const beat: LiveMessage = { t: 'beat', owner: 'replica-a', since: 1 };
      await channels.publish(channel, beat);
      // A party that can publish but lacks the key: clear JSON, a sealed message altered, one
      // sealed for another channel, one sealed with another key.
      const genuine = new LiveMessages(keys, () => {});
      const sealed = genuine.seal(channel, beat);
      await state.channels.publish(channel, JSON.stringify({ ...beat, at: Date.now() }));
      await state.channels.publish(channel, `${sealed.slice(0, -4)}AAAA`);
      await state.channels.publish(channel, genuine.seal(other, beat));
      const stranger = new LiveMessages({ key: randomBytes(32), oldKeys: [] }, () => {});
      await state.channels.publish(channel, stranger.seal(channel, beat));
      await channels.publish(channel, { t: 'beat', owner: 'replica-b', since: 2 });
      const deadline = Date.now() + 5_000;
      while (received.length < 2 && Date.now() < deadline) await sleep(5);
      stop();
      expect(received).toMatchObject([beat, { t: 'beat', owner: 'replica-b', since: 2 }]);
      expect(received).toHaveLength(2);
      expect(rejected).toEqual([
        'unauthenticated',
        'unauthenticated',
        'unauthenticated',
        'unauthenticated',
      ]);
    });
  });

  describe(`${name}: versioned store`, () => {
    it('writes only when newer: of racing writes the latest version stands, whatever the order', async () => {
      const { records } = make();
      const key = fresh('record');
      const versions = Array.from({ length: 40 }, (_, i) => 1_000 + ((i * 17) % 40));
      const outcomes = await Promise.all(
        versions.map((fetchedAt) =>
          records.writeIfNewer(key, { fetchedAt, value: `v${fetchedAt}` }, 60_000),
        ),
      );
      expect(await records.get(key)).toEqual({ fetchedAt: 1_039, value: 'v1039' });
      expect(outcomes).toContain('kept');
      // An older write after the race is kept out; an equal or newer one is written.
      expect(await records.writeIfNewer(key, { fetchedAt: 1_000, value: 'old' }, 60_000)).toBe(
        'kept',
      );
      expect(await records.writeIfNewer(key, { fetchedAt: 2_000, value: 'new' }, 60_000)).toBe(
        'written',
      );
      expect((await records.get(key))?.value).toBe('new');
    });

    it('a value lapses after its ttl', async () => {
      const { records, lapse } = make();
      const key = fresh('record');
      await records.writeIfNewer(key, { fetchedAt: 1, value: 'short' }, 100);
      expect((await records.get(key))?.value).toBe('short');
      await lapse(200);
      expect(await records.get(key)).toBeUndefined();
    });
  });
}

// ------------------------------------------------------------------------------------------------

contract('memory', () => {
  let now = 1_700_000_000_000;
  const clock = () => now;
  return {
    state: memoryState(clock),
    records: new MemoryVersionedStore<Entry>({ maxEntries: 1000, maxBytes: 1 << 20 }, clock),
    lapse: async (ms) => {
      now += ms;
    },
  };
});

const skip = skipRedisTests('state-contract');
let redis: TestRedis | undefined;
let connection: RedisConnection | undefined;
const failures: string[] = [];

describe.skipIf(skip)('redis', () => {
  beforeAll(async () => {
    redis = await startRedis();
    connection = new RedisConnection(
      { url: redis.url, connectTimeoutMs: 1000, commandTimeoutMs: 500, keyPrefix: 'contract' },
      { state: () => {}, error: (component) => failures.push(component) },
    );
    expect(await connection.connected(5000)).toBe(true);
  });
  afterAll(async () => {
    await connection?.close();
    await redis?.stop();
  });

  contract('redis', () => {
    if (!connection) throw new Error('no connection');
    return {
      state: redisState(connection),
      records: new RedisVersionedStore<Entry>(connection, undefined),
      // Expiry is on Redis's clock: wait past it.
      lapse: (ms) => sleep(ms),
    };
  });

  describe('set-once with a ledger (Redis only)', () => {
    it('of 50 concurrent setters exactly one sets; the others, and a read, get its value', async () => {
      if (!connection) throw new Error('no connection');
      const ledger = new RedisLedger(connection, [fresh('ledger')]);
      const { marker, created } = await ledger.check('');
      expect(created).toBe(true);
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) => ledger.setOnce('pay', marker, `order-${i}`, 60_000)),
      );
      const winners = replies.flatMap((reply, i) => (reply.held === undefined ? [i] : []));
      expect(winners).toHaveLength(1);
      const value = `order-${winners[0]}`;
      expect(new Set(replies.flatMap((reply) => reply.held ?? []))).toEqual(new Set([value]));
      expect(replies.every((reply) => reply.marker === marker)).toBe(true);
      expect(await ledger.get('pay', marker)).toEqual({ marker, held: value });
    });

    it('emptied under a holder: lost for every holder, nothing set, until acknowledged', async () => {
      if (!connection) throw new Error('no connection');
      const ledger = new RedisLedger(connection, [fresh('ledger')]);
      const { marker } = await ledger.check('');
      await ledger.setOnce('pay', marker, 'order-1', 60_000);
      // What a FLUSHALL or a restart without persistence does to these keys.
      await connection.run((client) => client.del([ledger.name('pay'), ledger.name('ledger')]));
      const after = await ledger.setOnce('pay', marker, 'order-2', 60_000);
      expect(after.marker).toMatch(/^lost:/);
      expect(after.held).toBeUndefined();
      // Another holder, even one that saw no marker yet, finds it lost.
      expect((await ledger.check('')).marker).toMatch(/^lost:/);
      expect((await ledger.get('pay', '')).held).toBeUndefined();
      const acknowledged = await ledger.acknowledge();
      expect(await ledger.marker()).toBe(acknowledged);
      const again = await ledger.setOnce('pay', marker, 'order-2', 60_000);
      expect(again).toEqual({ marker: acknowledged, held: undefined });
    });
  });

  describe('redis failing mid-operation', () => {
    it('throws RedisUnavailableError; orLocally acts locally and counts the failure once per call', async () => {
      if (!connection || !redis) throw new Error('no redis');
      const state = redisState(connection);
      const lease = fresh('lease');
      const held = await state.leases.take(lease, 10_000);
      expect(held).toBeDefined();
      await redis.stop();
      try {
        // The client notices the closed socket as its next event; wait for that, not a margin.
        const noticed = Date.now() + 10_000;
        while (connection.isReady && Date.now() < noticed) await sleep(10);
        await expect(state.leases.take(fresh('lease'), 10_000)).rejects.toBeInstanceOf(
          RedisUnavailableError,
        );
        await expect(held?.release()).rejects.toBeInstanceOf(RedisUnavailableError);
        failures.length = 0;
        const outcome = await state.orLocally<boolean | 'local'>(
          'flight',
          () => state.once.first(fresh('once'), 1000),
          () => 'local' as const,
        );
        expect(outcome).toBe('local');
        expect(failures).toEqual(['flight']);
      } finally {
        await redis.start();
      }
      // Back: the connection reconnects by itself, and the state works again.
      const deadline = Date.now() + 10_000;
      while (!connection.isReady && Date.now() < deadline) await sleep(50);
      expect(await state.once.first(fresh('once'), 1000)).toBe(true);
    });
  });
});

// The same contract on a real 3-master Redis Cluster: every multi-key script's keys share a hash
// tag (a CROSSSLOT error fails the test), and channels are sharded (SPUBLISH/SSUBSCRIBE).
const skipCluster = skipRedisClusterTests('state-contract cluster');
let cluster: TestRedisCluster | undefined;
let clusterConnection: RedisConnection | undefined;

describe.skipIf(skipCluster)('redis cluster', () => {
  beforeAll(async () => {
    cluster = await startRedisCluster();
    clusterConnection = new RedisConnection(
      { url: cluster.url, connectTimeoutMs: 1000, commandTimeoutMs: 500, keyPrefix: 'contract' },
      { state: () => {}, error: (component) => failures.push(component) },
    );
    expect(await clusterConnection.connected(5000)).toBe(true);
    expect(clusterConnection.cluster).toBe(true);
  }, 60_000);
  afterAll(async () => {
    await clusterConnection?.close();
    await cluster?.stop();
  });

  contract('redis cluster', () => {
    if (!clusterConnection) throw new Error('no connection');
    return {
      state: redisState(clusterConnection),
      records: new RedisVersionedStore<Entry>(clusterConnection, undefined),
      lapse: (ms) => sleep(ms),
    };
  });

  it('spreads keys over the three masters (a real cluster, not one node)', async () => {
    if (!cluster) throw new Error('no cluster');
    const slots = (await cluster.command(['CLUSTER', 'SLOTS'])) as unknown[];
    expect(slots).toHaveLength(3);
  });
});

// And through Redis Sentinel (`redis+sentinel://`): the client asks the sentinel for the master
// and talks to it (commands, scripts and pub/sub on its own connections).
let sentinel: TestRedisSentinel | undefined;
let sentinelConnection: RedisConnection | undefined;

describe.skipIf(skip)('redis sentinel', () => {
  beforeAll(async () => {
    sentinel = await startRedisSentinel();
    sentinelConnection = new RedisConnection(
      { url: sentinel.url, connectTimeoutMs: 1000, commandTimeoutMs: 500, keyPrefix: 'contract' },
      { state: () => {}, error: (component) => failures.push(component) },
    );
    expect(await sentinelConnection.connected(5000)).toBe(true);
  }, 30_000);
  afterAll(async () => {
    await sentinelConnection?.close();
    await sentinel?.stop();
  });

  contract('redis sentinel', () => {
    if (!sentinelConnection) throw new Error('no connection');
    return {
      state: redisState(sentinelConnection),
      records: new RedisVersionedStore<Entry>(sentinelConnection, undefined),
      lapse: (ms) => sleep(ms),
    };
  });

  it('writes on the master the sentinel names', async () => {
    if (!sentinelConnection || !sentinel) throw new Error('no sentinel');
    const name = fresh('once');
    expect(await redisState(sentinelConnection).once.first(name, 10_000)).toBe(true);
    expect(await sentinel.master.command(['EXISTS', `contract:${name}`])).toBe(1);
  });
});
