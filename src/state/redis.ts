/**
 * The process's connections to Redis (`CACHE_URL`): one for commands (cache, locks, rate-limit
 * counters, publishing) and one for pub/sub (a subscribed connection can send nothing else).
 * `CACHE_URL` names one node, a Redis Cluster or Redis Sentinel (state/redis-url.ts); the callers
 * see one client either way, and only {@link RedisConnection.cluster} tells them apart (for the
 * channels' sharded pub/sub, state/channel.ts).
 *
 * A Redis that is down must never make a request wait long: commands are refused at once while
 * the connection is down (no offline queue); a command that gets no answer within
 * `commandTimeoutMs` fails, and then Redis counts as down for a second (a hung server, whose
 * TCP connection stays open, costs one timeout per second rather than one per command); the
 * connection is retried in the background with a short backoff. Callers treat every failure as
 * "no Redis" and carry on without it.
 */
import { createHash } from 'node:crypto';
import { createClient, createCluster, createSentinel } from '@redis/client';
import { parseRedisUrl } from './redis-url.ts';
import type { LuaScript } from './scripts.ts';

type NodeClient = ReturnType<typeof createClient>;
type ClusterClient = ReturnType<typeof createCluster>;
type SentinelClient = ReturnType<typeof createSentinel>;

/**
 * A node-redis client as this module configures it: one node's, a cluster's (which sends each
 * command to the node that holds its key), or Sentinel's (which sends it to the master the
 * sentinels name). All take the same commands.
 */
export type RedisClient = NodeClient | ClusterClient | SentinelClient;

export interface RedisSettings {
  /** A `CACHE_URL` form of state/redis-url.ts; may hold a password, so it is never logged. */
  url: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** Prefix of every key and channel. */
  keyPrefix: string;
}

/** What the connection reports; no URL, key or value is ever passed. */
export interface RedisObserver {
  /** The command connection became usable (`true`) or was lost (`false`). */
  state(up: boolean): void;
  /** A Redis operation of a component failed (`cache`, `flight`, `live`, `rate_limit`, …). */
  error(component: string): void;
}

/** Redis is down, or did not answer in time: the caller goes on without it. */
export class RedisUnavailableError extends Error {
  constructor(reason: string) {
    super(`Redis unavailable: ${reason}`);
    this.name = 'RedisUnavailableError';
  }
}

// After a command timed out, how long commands fail at once before one is tried again.
const SUSPEND_AFTER_TIMEOUT_MS = 1000;

// Reconnection backoff: quick at first (a restarted Redis is used again within a second),
// never more than 1 s apart, so /readyz and the caches follow a recovered Redis promptly.
const reconnectDelay = (retries: number): number => Math.min(50 * 2 ** retries, 1000);

/** The connections, the key naming and small helpers (scripts, pub/sub) over them. */
export class RedisConnection {
  readonly client: RedisClient;
  /**
   * True on a Redis Cluster: channels are then sharded (`SPUBLISH`/`SSUBSCRIBE`, state/channel.ts
   * decides), and the keys one script touches must share a hash tag (state/scripts.ts).
   */
  readonly cluster: boolean;
  readonly #subscriber: RedisClient;
  readonly #readyListeners: (() => void)[] = [];
  readonly #node: NodeClient | undefined;
  readonly #clusterClient: ClusterClient | undefined;
  readonly #sentinel: SentinelClient | undefined;
  readonly #settings: RedisSettings;
  readonly #observer: RedisObserver;
  readonly #firstConnect: Promise<unknown>;
  #subscriberConnect: Promise<unknown> | undefined;
  #up = false;
  #closed = false;
  #suspendedUntil = 0;

  constructor(settings: RedisSettings, observer: RedisObserver) {
    this.#settings = settings;
    this.#observer = observer;
    const target = parseRedisUrl(settings.url);
    const socket = { connectTimeout: settings.connectTimeoutMs, reconnectStrategy: reconnectDelay };
    // Keeps an idle connection checked (and alive through NATs and proxies).
    const pingInterval = 5000;
    const credentials = {
      ...(target.kind !== 'node' && target.username !== undefined && { username: target.username }),
      ...(target.kind !== 'node' && target.password !== undefined && { password: target.password }),
    };
    if (target.kind === 'node') {
      this.cluster = false;
      this.#clusterClient = undefined;
      this.#sentinel = undefined;
      this.client = this.#node = createClient({
        url: target.url,
        disableOfflineQueue: true,
        pingInterval,
        socket,
      });
    } else if (target.kind === 'cluster') {
      this.cluster = true;
      this.#node = undefined;
      this.#sentinel = undefined;
      this.client = this.#clusterClient = createCluster({
        rootNodes: target.nodes.map(({ host, port }) => ({
          socket: { host, port, ...(target.tls && { tls: true as const }) },
        })),
        // Every node's connection, the discovered ones too.
        defaults: {
          ...credentials,
          disableOfflineQueue: true,
          pingInterval,
          socket: { ...socket, ...(target.tls && { tls: true as const }) },
        },
      });
    } else {
      this.cluster = false;
      this.#node = undefined;
      this.#clusterClient = undefined;
      this.client = this.#sentinel = createSentinel({
        name: target.name ?? '',
        sentinelRootNodes: target.nodes,
        // The master's connections (it follows a failover the sentinels announce).
        nodeClientOptions: {
          ...credentials,
          disableOfflineQueue: true,
          pingInterval,
          socket: { ...socket, ...(target.tls && { tls: true as const }) },
        },
        sentinelClientOptions: { socket },
      });
    }
    // The subscriber queues its SUBSCRIBEs while down: node-redis replays them on reconnect.
    // Sentinel's client keeps a pub/sub connection of its own, to the master it follows.
    this.#subscriber = this.#sentinel
      ? this.#sentinel
      : this.#clusterClient
        ? this.#clusterClient.duplicate({ defaults: { disableOfflineQueue: false } })
        : (this.#node as NodeClient).duplicate({ disableOfflineQueue: false });
    // Without listeners, node-redis's 'error' events would crash the process. The reasons
    // (refused, reset, timeout) are reported by state changes and by the failing callers.
    this.client.on('error', () => this.#setUp(false));
    if (this.#node) {
      this.client.on('ready', () => this.#setUp(true));
      this.client.on('end', () => this.#setUp(false));
    } else if (this.#clusterClient) {
      // A cluster client reports no 'ready': it is up once its nodes are known, and again after
      // the first command that succeeds following a failure.
      this.client.on('connect', () => this.#setUp(true));
    }
    if (this.#subscriber !== this.client) this.#subscriber.on('error', () => {});
    const connecting = (this.client.connect() as Promise<unknown>).then(() => {
      // Sentinel's client is up once it found the master.
      if (this.#sentinel) this.#setUp(true);
    });
    this.#firstConnect = connecting.catch(() => undefined);
    if (this.#sentinel) this.#subscriberConnect = this.#firstConnect;
  }

  #setUp(up: boolean): void {
    if (this.#closed || up === this.#up) return;
    this.#up = up;
    this.#observer.state(up);
    if (up && !this.#node) for (const listener of this.#readyListeners) listener();
  }

  /** Whether the client can take commands (a cluster: its nodes are known, and it is up). */
  #clientReady(): boolean {
    // A cluster's node connections refuse commands at once while their node is down.
    if (this.#sentinel) return this.#sentinel.isReady;
    return this.#node ? this.#node.isReady : this.client.isOpen;
  }

  /** Sends a raw command; on a cluster, to the node that holds `key` (a script's first key). */
  #send(key: string | undefined, args: string[]): Promise<unknown> {
    return this.#node
      ? this.#node.sendCommand(args)
      : this.#clusterClient
        ? this.#clusterClient.sendCommand(key, false, args)
        : this.#sentinel
          ? this.#sentinel.sendCommand(false, args)
          : Promise.reject(new RedisUnavailableError('no client'));
  }

  /**
   * Runs `listener` each time the command connection becomes ready: the first connection and
   * every reconnection (what was in Redis may have changed meanwhile).
   */
  onReady(listener: () => void): void {
    if (this.#node) this.#node.on('ready', listener);
    else this.#readyListeners.push(listener);
  }

  /** Reports a failed operation of `component` (metrics, throttled log line). */
  failed(component: string): void {
    if (!this.#closed) this.#observer.error(component);
  }

  /**
   * Waits for the first connection, at most `timeoutMs`. Returns whether Redis answers; the
   * gateway starts either way (and keeps trying in the background).
   */
  async connected(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#firstConnect,
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return this.#clientReady();
  }

  /** True when commands can be sent now. */
  get isReady(): boolean {
    return !this.#closed && this.#clientReady() && Date.now() >= this.#suspendedUntil;
  }

  /**
   * Runs one operation on the command connection, bounded in time. Fails at once when Redis
   * is down (or was hung a moment ago), and after `commandTimeoutMs` when it does not answer.
   * (node-redis's own command timeout stops counting once a command is written, so it can't
   * bound the wait on a server that accepted the connection but does not answer.)
   */
  async run<T>(operation: (client: RedisClient) => Promise<T>): Promise<T> {
    if (!this.isReady) throw new RedisUnavailableError('not connected');
    const work = operation(this.client);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.#suspendedUntil = Date.now() + SUSPEND_AFTER_TIMEOUT_MS;
        // The socket may still look connected: say that Redis is effectively down.
        this.#setUp(false);
        reject(new RedisUnavailableError('no answer in time'));
      }, this.#settings.commandTimeoutMs);
    });
    // A reply that comes after the timeout is dropped, and so is a late failure.
    work.catch(() => undefined);
    try {
      const result = await Promise.race([work, timeout]);
      if (!this.#up) this.#setUp(this.cluster || this.#clientReady());
      return result;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A key or channel name under the configured prefix: `prefix:part:part`. */
  key(...parts: string[]): string {
    return [this.#settings.keyPrefix, ...parts].join(':');
  }

  /** True when Redis answers a PING within the command timeout (for /readyz). */
  async ping(): Promise<boolean> {
    try {
      return (await this.run((client) => client.ping())) === 'PONG';
    } catch {
      return false;
    }
  }

  /**
   * Runs a Lua script by its SHA1 (EVALSHA), loading it on the first NOSCRIPT: the script's
   * text crosses the network once per Redis restart, not on every call.
   */
  async script(script: LuaScript, keys: string[], args: string[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await this.run(() => this.#send(keys[0], ['EVALSHA', script.sha, ...tail]));
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.run(() => this.#send(keys[0], ['EVAL', script.source, ...tail]));
    }
  }

  /**
   * Listens to a channel. The returned promise settles when Redis confirmed the subscription,
   * or after the command timeout when it is down (the subscription then starts when Redis is
   * back). The function it resolves to stops listening. `sharded`: `SSUBSCRIBE` (on the node
   * that holds the channel's slot) rather than `SUBSCRIBE`; state/channel.ts decides.
   */
  async subscribe(
    channel: string,
    listener: (message: string) => void,
    sharded: boolean,
  ): Promise<() => void> {
    if (this.#closed) return () => {};
    this.#subscriberConnect ??= this.#subscriber.connect().catch(() => undefined);
    const subscriber = this.#subscriber;
    // One function for subscribing and unsubscribing (the clients match listeners by identity).
    const own = (message: string | Buffer) => listener(String(message));
    const subscribed = this.#subscriberConnect.then(() =>
      sharded ? subscriber.sSubscribe(channel, own) : subscriber.subscribe(channel, own),
    );
    subscribed.catch(() => this.failed('live'));
    await Promise.race([
      subscribed.catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, this.#settings.commandTimeoutMs).unref()),
    ]);
    return () => {
      subscribed
        .then(async () => {
          if (!subscriber.isOpen) return;
          if (sharded) await subscriber.sUnsubscribe(channel, own);
          else await subscriber.unsubscribe(channel, own);
        })
        .catch(() => undefined);
    };
  }

  /** Closes both connections (graceful shutdown). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // close() lets commands in flight finish; a hung Redis gets one command timeout for that.
    await Promise.race([
      Promise.allSettled(
        this.#clients().map((client) => (client.isOpen ? client.close() : Promise.resolve())),
      ),
      new Promise((resolve) => setTimeout(resolve, this.#settings.commandTimeoutMs).unref()),
    ]);
    // A connection still retrying (Redis down) or hung has nothing to flush: stop it outright.
    for (const client of this.#clients()) if (client.isOpen) void client.destroy();
  }

  /** The command client and the subscriber, once each (Sentinel's client is both). */
  #clients(): RedisClient[] {
    return this.#subscriber === this.client ? [this.client] : [this.client, this.#subscriber];
  }
}

/**
 * A short, stable name for a value that must not appear in clear in a key (a caller's subject
 * or address): SHA-256, base64url, 22 characters (132 bits).
 */
export function hashedKeyPart(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}
