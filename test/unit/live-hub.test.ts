/**
 * The live hub over the memory state, on a fake clock, with no sleep. Two hubs over one memory
 * state stand for two replicas over one Redis (a cluster of two in one process); each hub has
 * its own timers on the one shared time, so that a replica can "die" (its timers stop) while
 * the other goes on.
 */
import { describe, expect, it } from 'vitest';
import type { ReadOptions, RecordSources } from '../../src/cache/sources.ts';
import { GatewayError } from '../../src/errors.ts';
import type { TransactionStatus } from '../../src/graphql/generated/resolvers-types.ts';
import type { LiveClock, LiveObserver, LiveSettings } from '../../src/live/hub.ts';
import { type LiveMessage, LiveMessages } from '../../src/live/messages.ts';
import { eventsChannel, LiveHub } from '../../src/live/status-hub.ts';
import type { UpstreamKycUser, UpstreamTransaction } from '../../src/model/records.ts';
import { memoryState } from '../../src/state/index.ts';

interface Timer {
  at: number;
  every?: number;
  fire: () => void;
}

/** One time for the whole test; each hub's timers on a clock of its own. */
class World {
  now = 1_700_000_000_000;
  readonly clocks: FakeClock[] = [];

  clock(): FakeClock {
    const clock = new FakeClock(this);
    this.clocks.push(clock);
    return clock;
  }

  /** Moves time on by `ms`, firing each due timer in order and letting its work run. */
  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    for (;;) {
      let next: { clock: FakeClock; timer: Timer } | undefined;
      for (const clock of this.clocks) {
        if (clock.dead) continue;
        for (const timer of clock.timers) {
          if (timer.at <= until && (!next || timer.at < next.timer.at)) next = { clock, timer };
        }
      }
      if (!next) break;
      this.now = Math.max(this.now, next.timer.at);
      if (next.timer.every) next.timer.at += next.timer.every;
      else next.clock.timers.delete(next.timer);
      next.timer.fire();
      await settle();
    }
    this.now = until;
    await settle();
  }
}

class FakeClock implements LiveClock {
  readonly timers = new Set<Timer>();
  /** A dead replica: its timers never fire again. */
  dead = false;
  readonly #world: World;

  constructor(world: World) {
    this.#world = world;
  }

  now = (): number => this.#world.now;

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer: Timer = { at: this.#world.now + ms, fire: resolve };
      this.timers.add(timer);
      signal?.addEventListener(
        'abort',
        () => {
          this.timers.delete(timer);
          resolve();
        },
        { once: true },
      );
    });
  }

  every(ms: number, tick: () => void): () => void {
    const timer: Timer = { at: this.#world.now + ms, every: ms, fire: tick };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }
}

/** Lets every promise that can settle now settle (no time passes). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

const tx = (txRef: string, status: TransactionStatus) =>
  ({ txRef, status, rawStatus: status }) as UpstreamTransaction;

/**
 * The payment service and the cache as the hub sees them: `status` is what the service says,
 * `cached` what the cache holds (a fresh read writes it). Each fresh read is a poll: its time is
 * kept.
 */
class Service implements RecordSources {
  readonly status = new Map<string, TransactionStatus>();
  readonly cached = new Map<string, TransactionStatus>();
  readonly polls: number[] = [];
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  async transaction(txRef: string, options?: ReadOptions): Promise<UpstreamTransaction | null> {
    if (options?.bypassCache || !this.cached.has(txRef)) {
      if (options?.bypassCache) this.polls.push(this.#now());
      const status = this.status.get(txRef);
      if (status === undefined) return null;
      this.cached.set(txRef, status);
    }
    return tx(txRef, this.cached.get(txRef) as TransactionStatus);
  }

  async kycUser(): Promise<UpstreamKycUser | null> {
    return null;
  }
}

/** Pollers and subscribers counted as the metrics count them. */
function gauges(): LiveObserver & { pollerCount: number; subscriberCount: number } {
  return {
    pollerCount: 0,
    subscriberCount: 0,
    pollers(delta) {
      this.pollerCount += delta;
    },
    subscribers(delta) {
      this.subscriberCount += delta;
    },
    poll() {},
  };
}

const SETTINGS: LiveSettings = {
  pollMs: 1_000,
  maxPollMs: 8_000,
  maxWatchMs: 600_000,
  heartbeatMs: 500,
  maxPerCaller: 3,
};

/** Two replicas (or more) over one memory state. */
function cluster(settings: Partial<LiveSettings> = {}) {
  const world = new World();
  const state = memoryState(() => world.now);
  const service = new Service(() => world.now);
  const replica = () => {
    const clock = world.clock();
    const observer = gauges();
    const hub = new LiveHub(
      { sources: service, settings: { ...SETTINGS, ...settings }, observer, clock },
      state,
      new LiveMessages(undefined, () => {}),
    );
    return { hub, clock, observer };
  };
  return { world, state, service, replica };
}

/** A subscriber: what it saw, how it ended, and how it leaves (its signal aborts). */
function subscribe(stream: AsyncGenerator<UpstreamTransaction>) {
  const seen: TransactionStatus[] = [];
  const end: { done: boolean; error?: unknown } = { done: false };
  const ended = (async () => {
    try {
      for await (const record of stream) seen.push(record.status);
    } catch (error) {
      end.error = error;
    }
    end.done = true;
  })();
  return { seen, end, ended };
}

function watch(hub: LiveHub, txRef: string, caller = 'merchant') {
  const leave = new AbortController();
  return { ...subscribe(hub.watch(txRef, leave.signal, caller)), leave: () => leave.abort() };
}

describe('the live hub over the memory state (two replicas in one process)', () => {
  it('one poller per record for both replicas; every subscriber sees each change, then the end', async () => {
    const { world, service, replica } = cluster();
    const a = replica();
    const b = replica();
    service.status.set('T1', 'PENDING');
    const onA = [watch(a.hub, 'T1'), watch(a.hub, 'T1')];
    const onB = [watch(b.hub, 'T1', 'other'), watch(b.hub, 'T1', 'other')];
    await settle();
    for (const s of [...onA, ...onB]) expect(s.seen).toEqual(['PENDING']);
    expect(a.observer.pollerCount + b.observer.pollerCount).toBe(1);

    await world.advance(5_000);
    // One poll sequence: one poll per interval, whoever polls.
    expect(service.polls).toHaveLength(5);
    expect(a.observer.pollerCount + b.observer.pollerCount).toBe(1);

    service.status.set('T1', 'SUCCESSFUL');
    await world.advance(1_000);
    for (const s of [...onA, ...onB]) {
      expect(s.seen).toEqual(['PENDING', 'SUCCESSFUL']);
      expect(s.end).toEqual({ done: true });
    }
    expect(a.observer.pollerCount + b.observer.pollerCount).toBe(0);
    expect(a.observer.subscriberCount + b.observer.subscriberCount).toBe(0);
    // A final status ended the watch: nothing polls any more.
    await world.advance(10_000);
    expect(service.polls).toHaveLength(6);
  });

  it('heartbeats every LIVE_HEARTBEAT_MS keep the other replica from polling', async () => {
    const { world, state, service, replica } = cluster();
    const a = replica();
    const b = replica();
    service.status.set('T2', 'PENDING');
    const beats: LiveMessage[] = [];
    const codec = new LiveMessages(undefined, () => {});
    const channel = eventsChannel(state, 'T2');
    await state.channels.subscribe(channel, (text) => {
      const message = codec.open(channel, text);
      if (message?.t === 'beat') beats.push(message);
    });
    const first = watch(a.hub, 'T2');
    await settle();
    const second = watch(b.hub, 'T2');
    await settle();
    expect(a.observer.pollerCount).toBe(1);
    beats.length = 0;

    await world.advance(30_000);
    // 60 beats of 500 ms, all from the one poller, all carrying its sequence's start.
    expect(beats.length).toBeGreaterThanOrEqual(59);
    expect(new Set(beats.map((beat) => beat.owner)).size).toBe(1);
    expect(new Set(beats.map((beat) => (beat.t === 'beat' ? beat.since : 0))).size).toBe(1);
    expect(b.observer.pollerCount).toBe(0);
    expect(service.polls).toHaveLength(30);
    first.leave();
    second.leave();
    await Promise.all([first.ended, second.ended]);
  });

  it('takes over when the polling replica dies: its lease lapses, the other polls on', async () => {
    const { world, service, replica } = cluster();
    const a = replica();
    const b = replica();
    service.status.set('T3', 'PENDING');
    watch(a.hub, 'T3');
    await settle();
    const survivor = watch(b.hub, 'T3');
    await settle();
    await world.advance(3_000);
    expect(a.observer.pollerCount).toBe(1);
    const before = service.polls.length;

    // A dies: no beat, no poll, no renewal from it any more.
    a.clock.dead = true;
    await world.advance(1_000);
    expect(service.polls).toHaveLength(before);
    // Three beats of silence (its lease's hold), and B takes the lease and polls.
    await world.advance(2_500);
    expect(b.observer.pollerCount).toBe(1);
    await world.advance(3_000);
    expect(service.polls.length).toBeGreaterThan(before + 1);

    service.status.set('T3', 'SUCCESSFUL');
    await world.advance(1_000);
    expect(survivor.seen).toEqual(['PENDING', 'SUCCESSFUL']);
    expect(survivor.end).toEqual({ done: true });
    expect(b.observer.pollerCount).toBe(0);
  });

  it('backs off after the first minute: doubling up to LIVE_MAX_POLL_MS', async () => {
    const { world, service, replica } = cluster();
    const a = replica();
    service.status.set('T4', 'PENDING');
    const start = world.now;
    const subscriber = watch(a.hub, 'T4');
    await settle();
    await world.advance(120_000);
    const gaps = service.polls.map((at, i) => at - (i === 0 ? start : (service.polls[i - 1] ?? 0)));
    // Every second for the first minute (the poll after it too: it was due within it).
    expect(gaps.slice(0, 61).every((gap) => gap === 1_000)).toBe(true);
    expect(gaps.slice(61, 66)).toEqual([2_000, 4_000, 8_000, 8_000, 8_000]);
    subscriber.leave();
    await subscriber.ended;
    expect(subscriber.end).toEqual({ done: true });
  });

  it('ends with UPSTREAM_TIMEOUT at the watch time, and stops polling', async () => {
    const { world, service, replica } = cluster({ maxWatchMs: 10_000 });
    const a = replica();
    service.status.set('T5', 'PENDING');
    const subscriber = watch(a.hub, 'T5');
    await settle();
    await world.advance(10_000);
    await subscriber.ended;
    expect((subscriber.end.error as GatewayError).code).toBe('UPSTREAM_TIMEOUT');
    const polls = service.polls.length;
    await world.advance(10_000);
    expect(service.polls).toHaveLength(polls);
    expect(a.observer.pollerCount).toBe(0);
  });

  it('LIVE_MAX_PER_CALLER counts a caller across replicas; leaving frees the slot', async () => {
    const { world, service, replica } = cluster({ maxPerCaller: 2 });
    const a = replica();
    const b = replica();
    for (const ref of ['U1', 'U2', 'U3']) service.status.set(ref, 'PENDING');
    const one = watch(a.hub, 'U1');
    const two = watch(b.hub, 'U2');
    await settle();
    const third = watch(a.hub, 'U3');
    await third.ended;
    expect(third.end.error).toBeInstanceOf(GatewayError);
    expect((third.end.error as GatewayError).code).toBe('RATE_LIMITED');
    // Another caller is not affected.
    const stranger = watch(b.hub, 'U3', 'stranger');
    await settle();
    expect(stranger.seen).toEqual(['PENDING']);

    // Held slots are renewed: a minute on, the caller still holds two.
    await world.advance(60_000);
    const fourth = watch(b.hub, 'U3');
    await fourth.ended;
    expect((fourth.end.error as GatewayError).code).toBe('RATE_LIMITED');

    one.leave();
    await one.ended;
    expect(one.end).toEqual({ done: true });
    const again = watch(b.hub, 'U3');
    await settle();
    expect(again.seen).toEqual(['PENDING']);
    expect(again.end.done).toBe(false);
    for (const s of [two, stranger, again]) s.leave();
  });

  it('stops polling when the last subscriber of the cluster leaves, not before', async () => {
    const { world, service, replica } = cluster();
    const a = replica();
    const b = replica();
    service.status.set('T6', 'PENDING');
    const onA = watch(a.hub, 'T6');
    await settle();
    const onB = watch(b.hub, 'T6');
    await settle();
    // The poller's replica loses its subscriber; the other's still counts.
    onA.leave();
    await world.advance(3_000);
    expect(a.observer.pollerCount + b.observer.pollerCount).toBe(1);
    const polls = service.polls.length;
    expect(polls).toBeGreaterThanOrEqual(2);
    onB.leave();
    await world.advance(3_000);
    expect(a.observer.pollerCount + b.observer.pollerCount).toBe(0);
    expect(service.polls.length).toBeLessThanOrEqual(polls + 1);
  });

  it('a new subscriber whose cached record is final gets it asked of the service first', async () => {
    const { service, replica } = cluster();
    const a = replica();
    service.cached.set('T7', 'SUCCESSFUL');
    service.status.set('T7', 'FAILED');
    const subscriber = watch(a.hub, 'T7');
    await subscriber.ended;
    expect(subscriber.seen).toEqual(['FAILED']);
    expect(subscriber.end).toEqual({ done: true });
    expect(service.polls).toHaveLength(1);
  });

  it('close ends every watch with UPSTREAM_UNAVAILABLE and stops the poller', async () => {
    const { service, replica } = cluster();
    const a = replica();
    service.status.set('T8', 'PENDING');
    const subscriber = watch(a.hub, 'T8');
    await settle();
    await a.hub.close();
    await subscriber.ended;
    expect((subscriber.end.error as GatewayError).code).toBe('UPSTREAM_UNAVAILABLE');
    expect(a.observer.pollerCount).toBe(0);
  });
});
