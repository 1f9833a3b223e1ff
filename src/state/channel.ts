/**
 * Publish/subscribe channels between replicas, every message through one codec: sealed before
 * it is published and opened on receipt, where a message that does not open (forged, altered,
 * copied from another channel, replayed late) is dropped — the codec counts it — and never
 * reaches a listener. In memory the channels are this process's (a cluster of one: a message is
 * delivered asynchronously, as from Redis); in Redis, `PUBLISH`/`SUBSCRIBE` on one node and
 * sharded `SPUBLISH`/`SSUBSCRIBE` on a Redis Cluster (a message then travels to the one shard that
 * holds its channel's slot, not to every node of the cluster; Redis 7 or later), chosen by
 * {@link publishCommand} alone. Channel names are full names (the codec binds each message to its
 * channel's name); on a cluster, a script that publishes must share its channel's hash tag.
 */
import type { RedisConnection } from './redis.ts';

/**
 * Texts on channels. `publish` throws when the message was not taken, and resolves to how many
 * listeners it reached (0: nobody listens on that channel, on any replica).
 */
export interface Channels {
  publish(channel: string, text: string): Promise<number>;
  /** Resolves once listening (or, Redis down, once the subscription is queued): to stop it. */
  subscribe(channel: string, listener: (text: string) => void): Promise<() => void>;
}

/** Seals a message for a channel, and opens one received (undefined: dropped, and counted). */
export interface ChannelCodec<M> {
  seal(channel: string, message: M): string;
  open(channel: string, text: string): M | undefined;
}

/** Channels of this process alone. */
export class MemoryChannels implements Channels {
  readonly #listeners = new Map<string, Set<(text: string) => void>>();

  async publish(channel: string, text: string): Promise<number> {
    const listeners = this.#listeners.get(channel) ?? new Set();
    for (const listener of listeners) queueMicrotask(() => listener(text));
    return listeners.size;
  }

  async subscribe(channel: string, listener: (text: string) => void): Promise<() => void> {
    // Each subscription its own entry, so that stopping one leaves the others.
    const own = (text: string) => listener(text);
    const set = this.#listeners.get(channel) ?? new Set();
    set.add(own);
    this.#listeners.set(channel, set);
    return () => {
      set.delete(own);
      if (set.size === 0 && this.#listeners.get(channel) === set) this.#listeners.delete(channel);
    };
  }
}

/**
 * The publishing command on this Redis: sharded on a cluster, plain on one node (which may be
 * older than Redis 7). The one place that decides; a Lua script that publishes takes it as an
 * argument.
 */
export function publishCommand(redis: RedisConnection): 'PUBLISH' | 'SPUBLISH' {
  return redis.cluster ? 'SPUBLISH' : 'PUBLISH';
}

/** Channels on Redis, for every replica. */
export class RedisChannels implements Channels {
  readonly #redis: RedisConnection;
  readonly #sharded: boolean;

  constructor(redis: RedisConnection) {
    this.#redis = redis;
    this.#sharded = publishCommand(redis) === 'SPUBLISH';
  }

  async publish(channel: string, text: string): Promise<number> {
    return Number(
      await this.#redis.run((client) =>
        this.#sharded ? client.sPublish(channel, text) : client.publish(channel, text),
      ),
    );
  }

  subscribe(channel: string, listener: (text: string) => void): Promise<() => void> {
    return this.#redis.subscribe(channel, listener, this.#sharded);
  }
}

/** Messages of type `M` on channels, through the codec both ways. */
export class SealedChannels<M> {
  readonly #channels: Channels;
  readonly #codec: ChannelCodec<M>;

  constructor(channels: Channels, codec: ChannelCodec<M>) {
    this.#channels = channels;
    this.#codec = codec;
  }

  /** Seals and publishes; throws when the message was not taken. Resolves to the listeners reached. */
  publish(channel: string, message: M): Promise<number> {
    return this.#channels.publish(channel, this.#codec.seal(channel, message));
  }

  /** Listens for the messages that open; the others are dropped (and counted by the codec). */
  subscribe(channel: string, listener: (message: M) => void): Promise<() => void> {
    return this.#channels.subscribe(channel, (text) => {
      const message = this.#codec.open(channel, text);
      if (message !== undefined) listener(message);
    });
  }
}
