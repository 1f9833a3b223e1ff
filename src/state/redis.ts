/**
 * The process's connections to Redis (`CACHE_URL`): one for commands (cache, locks, rate-limit
 * counters, publishing) and one for pub/sub (a subscribed connection can send nothing else).
 *
 * A Redis that is down must never make a request wait long: commands are refused at once while
 * the connection is down (no offline queue); a command that gets no answer within
 * `commandTimeoutMs` fails, and then Redis counts as down for a second (a hung server, whose
 * TCP connection stays open, costs one timeout per second rather than one per command); the
 * connection is retried in the background with a short backoff. Callers treat every failure as
 * "no Redis" and carry on without it.
 */
import { createHash } from 'node:crypto';
import { createClient } from '@redis/client';
import type { LuaScript } from './scripts.ts';

/** A node-redis client as this module configures it. */
export type RedisClient = ReturnType<typeof createClient>;

export interface RedisSettings {
  /** `redis://` or `rediss://`; may hold a password, so it is never logged. */
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
  readonly #subscriber: RedisClient;
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
    this.client = createClient({
      url: settings.url,
      disableOfflineQueue: true,
      // Keeps an idle connection checked (and alive through NATs and proxies).
      pingInterval: 5000,
      socket: { connectTimeout: settings.connectTimeoutMs, reconnectStrategy: reconnectDelay },
    });
    // The subscriber queues its SUBSCRIBEs while down: node-redis replays them on reconnect.
    this.#subscriber = this.client.duplicate({ disableOfflineQueue: false });
    // Without listeners, node-redis's 'error' events would crash the process. The reasons
    // (refused, reset, timeout) are reported by state changes and by the failing callers.
    this.client.on('error', () => this.#setUp(false));
    this.client.on('ready', () => this.#setUp(true));
    this.client.on('end', () => this.#setUp(false));
    this.#subscriber.on('error', () => {});
    this.#firstConnect = this.client.connect().catch(() => undefined);
  }

  #setUp(up: boolean): void {
    if (this.#closed || up === this.#up) return;
    this.#up = up;
    this.#observer.state(up);
  }

  /**
   * Runs `listener` each time the command connection becomes ready: the first connection and
   * every reconnection (what was in Redis may have changed meanwhile).
   */
  onReady(listener: () => void): void {
    this.client.on('ready', listener);
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
    return this.client.isReady;
  }

  /** True when commands can be sent now. */
  get isReady(): boolean {
    return !this.#closed && this.client.isReady && Date.now() >= this.#suspendedUntil;
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
      if (!this.#up) this.#setUp(this.client.isReady);
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
      return await this.run((client) => client.sendCommand(['EVALSHA', script.sha, ...tail]));
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.run((client) => client.sendCommand(['EVAL', script.source, ...tail]));
    }
  }

  /** Publishes a message; false when Redis did not take it. */
  async publish(channel: string, message: string): Promise<boolean> {
    try {
      await this.run((client) => client.publish(channel, message));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Listens to a channel. The returned promise settles when Redis confirmed the subscription,
   * or after the command timeout when it is down (the subscription then starts when Redis is
   * back). The function it resolves to stops listening.
   */
  async subscribe(channel: string, listener: (message: string) => void): Promise<() => void> {
    if (this.#closed) return () => {};
    this.#subscriberConnect ??= this.#subscriber.connect().catch(() => undefined);
    const subscribed = this.#subscriberConnect.then(() =>
      this.#subscriber.subscribe(channel, listener),
    );
    subscribed.catch(() => this.failed('live'));
    await Promise.race([
      subscribed.catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, this.#settings.commandTimeoutMs).unref()),
    ]);
    return () => {
      subscribed
        .then(async () => {
          if (this.#subscriber.isOpen) await this.#subscriber.unsubscribe(channel, listener);
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
        [this.client, this.#subscriber].map((client) =>
          client.isOpen ? client.close() : Promise.resolve(),
        ),
      ),
      new Promise((resolve) => setTimeout(resolve, this.#settings.commandTimeoutMs).unref()),
    ]);
    // A connection still retrying (Redis down) or hung has nothing to flush: stop it outright.
    for (const client of [this.client, this.#subscriber]) if (client.isOpen) client.destroy();
  }
}

/**
 * A short, stable name for a value that must not appear in clear in a key (a caller's subject
 * or address): SHA-256, base64url, 22 characters (132 bits).
 */
export function hashedKeyPart(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}
