/**
 * What graphql-sse's single-connection reservations share between replicas, behind one narrow
 * interface (transports/sse.ts keeps the streams and operations themselves):
 *
 * - who reserved a token (`reserve`, set once, for the time a reservation may stay unused);
 * - which replica holds its event stream (`claim`: set once, a lease the holder renews while the
 *   stream is open, given back when it ends);
 * - a request for that stream, made on another replica (an operation, a stop), carried to the
 *   holder and its answer carried back (`ask` / `listen`).
 *
 * {@link MemorySseReservations}: nothing is shared; a reservation lives in the process that made
 * it (one replica, or a balancer that keeps a client on one). {@link RedisSseReservations}
 * (`CACHE_URL` with `CACHE_ENCRYPTION_KEY`): a token is named in Redis only by a digest of it
 * (`hashedKeyPart`), the caller it belongs to is sealed with the cache key, and every relayed
 * request and answer (operations carry the caller's token and variables; answers carry errors)
 * travels sealed through the live channels' codec (live/messages.ts): a party that can write to
 * Redis but lacks the key can neither read nor forge one.
 *
 * Keys and channels (under `CACHE_KEY_PREFIX`), `<h>` the token's digest:
 * - `sse:reservation:<h>`: the caller, sealed; expires when the reservation is unused, then with
 *   the holder's lease;
 * - `sse:holder:<h>`: the holding replica's random id; a lease (`leaseMs`);
 * - channel `sse:stream:<h>`: requests for the stream, heard by its holder alone;
 * - channel `sse:answers:<replica id>`: answers to the requests that replica relayed.
 */
import { randomUUID } from 'node:crypto';
import { Sealer, type SealKeys } from '../cache/seal.ts';
import { type LiveMessages, MESSAGE_MAX_AGE_MS } from '../live/messages.ts';
import { hashedKeyPart, luaScript, type RedisConnection } from '../redis/connection.ts';

/** A reservation as every replica sees it. */
export interface SharedReservation {
  /** The caller that reserved it (the operation entry's `caller`). */
  caller: string;
  /** The replica holding its event stream; undefined while it is not open. */
  holder: string | undefined;
}

/** A request for a stream held by another replica. */
export type RelayRequest =
  | {
      kind: 'operate';
      /** The caller's `Authorization`: the holder identifies the token itself. */
      authorization: string;
      params: Record<string, unknown>;
      requestId: string;
    }
  | { kind: 'stop'; authorization: string; operationId: string; requestId: string };

/**
 * The HTTP answer to a relayed request, and what the relaying replica's request log and metrics
 * say of it: the error codes it carried, the operation's name and type.
 */
export interface RelayAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  codes: string[];
  operation?: string;
  operationType?: string;
}

export interface SseReservations {
  /** This replica's id (a holder's name). */
  readonly replica: string;
  /** Whether other replicas see these reservations. */
  readonly shared: boolean;
  /** Registers a new token for `caller`, for `ttlMs` unless its stream opens. */
  reserve(token: string, caller: string, ttlMs: number): Promise<void>;
  /** The reservation of `token`, or undefined (never made, expired, ended). */
  find(token: string): Promise<SharedReservation | undefined>;
  /**
   * Makes this replica the holder of the token's stream; false when it is gone or held elsewhere
   * (true when Redis cannot say: a replica then serves its own reservations).
   */
  claim(token: string, leaseMs: number): Promise<boolean>;
  /** Keeps this replica's claim (and the reservation) for `leaseMs` more. */
  renew(token: string, leaseMs: number): Promise<void>;
  /** Forgets the reservation, unless another replica holds it. */
  drop(token: string): Promise<void>;
  /** Serves the requests other replicas relay for the token's stream; returns the stop. */
  listen(
    token: string,
    serve: (request: RelayRequest) => Promise<RelayAnswer>,
  ): Promise<() => void>;
  /**
   * Relays a request to the holder of the token's stream and waits for its answer: `gone` when
   * no replica listens for it (its holder died), `timeout` when none came in `timeoutMs`.
   */
  ask(
    token: string,
    holder: string,
    request: RelayRequest,
    timeoutMs: number,
  ): Promise<RelayAnswer | 'gone' | 'timeout'>;
  close(): void;
}

/** Nothing shared: every reservation lives in the process that made it. */
export class MemorySseReservations implements SseReservations {
  readonly replica = randomUUID();
  readonly shared = false;
  async reserve(): Promise<void> {}
  async find(): Promise<SharedReservation | undefined> {
    return undefined;
  }
  async claim(): Promise<boolean> {
    return true;
  }
  async renew(): Promise<void> {}
  async drop(): Promise<void> {}
  async listen(): Promise<() => void> {
    return () => {};
  }
  async ask(): Promise<'gone'> {
    return 'gone';
  }
  close(): void {}
}

// KEYS: reservation, holder. ARGV: replica, lease ms. 1 claimed; 0 held already; -1 gone.
const CLAIM = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

// KEYS: reservation, holder. ARGV: replica, lease ms.
const RENEW = luaScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`);

// KEYS: reservation, holder. ARGV: the replica that may drop it (or whose claim died).
const DROP = luaScript(`
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1], KEYS[2])
`);

const MAX_ID = 128;

function isString(value: unknown, max = 100_000): value is string {
  return typeof value === 'string' && value.length <= max;
}

function relayRequestOf(value: Record<string, unknown>): RelayRequest | undefined {
  const { kind, authorization, requestId } = value;
  if (!isString(authorization, 16_384) || !isString(requestId, MAX_ID)) return undefined;
  if (kind === 'operate') {
    const { params } = value;
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
    return { kind, authorization, requestId, params: params as Record<string, unknown> };
  }
  if (kind === 'stop' && isString(value.operationId, MAX_ID)) {
    return { kind, authorization, requestId, operationId: value.operationId };
  }
  return undefined;
}

function relayAnswerOf(value: Record<string, unknown>): RelayAnswer | undefined {
  const { status, headers, body, codes, operation, operationType } = value;
  if (!Number.isInteger(status) || !isString(body, 10_000_000)) return undefined;
  if (operation !== undefined && !isString(operation, MAX_ID)) return undefined;
  if (operationType !== undefined && !isString(operationType, MAX_ID)) return undefined;
  if (typeof headers !== 'object' || headers === null) return undefined;
  if (!Array.isArray(codes) || !codes.every((code) => isString(code, MAX_ID))) return undefined;
  const clean: Record<string, string> = {};
  for (const [name, header] of Object.entries(headers)) {
    if (typeof header === 'string') clean[name] = header;
  }
  return {
    status: status as number,
    headers: clean,
    body,
    codes: codes as string[],
    ...(operation !== undefined && { operation }),
    ...(operationType !== undefined && { operationType }),
  };
}

/** Reservations shared through Redis, every value and message sealed. */
export class RedisSseReservations implements SseReservations {
  readonly replica = randomUUID();
  readonly shared = true;
  readonly #redis: RedisConnection;
  readonly #sealer: Sealer;
  readonly #messages: LiveMessages;
  /** Relayed requests waiting for their answer, by request id. */
  readonly #waiting = new Map<string, (answer: RelayAnswer) => void>();
  #answers: Promise<() => void> | undefined;

  /** `messages` must seal (a cache key is set): what travels here holds personal data. */
  constructor(redis: RedisConnection, keys: SealKeys, messages: LiveMessages) {
    if (!messages.sealed) throw new Error('shared reservations need the cache key');
    this.#redis = redis;
    this.#sealer = new Sealer(keys);
    this.#messages = messages;
  }

  #keys(token: string) {
    const digest = hashedKeyPart(token);
    return {
      reservation: this.#redis.key('sse', 'reservation', digest),
      holder: this.#redis.key('sse', 'holder', digest),
      channel: this.#redis.key('sse', 'stream', digest),
    };
  }

  #answerChannel(replica: string): string {
    return this.#redis.key('sse', 'answers', replica);
  }

  async reserve(token: string, caller: string, ttlMs: number): Promise<void> {
    const { reservation } = this.#keys(token);
    const value = this.#sealer.seal(reservation, JSON.stringify({ caller }));
    try {
      await this.#redis.run((client) =>
        client.set(reservation, value, {
          condition: 'NX',
          expiration: { type: 'PX', value: Math.max(1, Math.ceil(ttlMs)) },
        }),
      );
    } catch {
      this.#redis.failed('sse');
    }
  }

  async find(token: string): Promise<SharedReservation | undefined> {
    const { reservation, holder } = this.#keys(token);
    let values: (string | null)[];
    try {
      values = (await this.#redis.run((client) => client.mGet([reservation, holder]))) as (
        | string
        | null
      )[];
    } catch {
      this.#redis.failed('sse');
      return undefined;
    }
    const [sealed, holding] = values;
    if (typeof sealed !== 'string') return undefined;
    try {
      const { caller } = JSON.parse(this.#sealer.open(reservation, sealed)) as { caller?: unknown };
      if (typeof caller !== 'string') return undefined;
      return { caller, holder: typeof holding === 'string' ? holding : undefined };
    } catch {
      // Not sealed by a replica holding the key (altered, moved, forged): no reservation.
      return undefined;
    }
  }

  async claim(token: string, leaseMs: number): Promise<boolean> {
    const { reservation, holder } = this.#keys(token);
    try {
      const reply = await this.#redis.script(
        CLAIM,
        [reservation, holder],
        [this.replica, String(leaseMs)],
      );
      return Number(reply) === 1;
    } catch {
      // Redis down: this replica serves the reservations it made itself, as without Redis.
      this.#redis.failed('sse');
      return true;
    }
  }

  async renew(token: string, leaseMs: number): Promise<void> {
    const { reservation, holder } = this.#keys(token);
    await this.#redis
      .script(RENEW, [reservation, holder], [this.replica, String(leaseMs)])
      .catch(() => this.#redis.failed('sse'));
  }

  async drop(token: string): Promise<void> {
    await this.#forget(token, this.replica);
  }

  async #forget(token: string, holderId: string): Promise<void> {
    const { reservation, holder } = this.#keys(token);
    await this.#redis
      .script(DROP, [reservation, holder], [holderId])
      .catch(() => this.#redis.failed('sse'));
  }

  async listen(
    token: string,
    serve: (request: RelayRequest) => Promise<RelayAnswer>,
  ): Promise<() => void> {
    const { channel } = this.#keys(token);
    // The ids served in the last two message lifetimes: a sealed request captured on Redis and
    // published again is not served twice.
    const served = new Map<string, number>();
    return this.#redis.subscribe(channel, (text) => {
      const message = this.#messages.openPrivate(channel, text);
      const request = message && relayRequestOf(message);
      const { reply, id } = message ?? {};
      if (!request || !isString(reply, MAX_ID) || !isString(id, MAX_ID)) return;
      const now = Date.now();
      if (served.has(id)) return;
      for (const [seen, at] of served) {
        if (now - at <= 2 * MESSAGE_MAX_AGE_MS) break;
        served.delete(seen);
      }
      served.set(id, now);
      void serve(request).then((answer) => {
        const to = this.#answerChannel(reply);
        const sealed = this.#messages.sealPrivate(to, { id, ...answer });
        if (sealed !== undefined) void this.#redis.publish(to, sealed);
      });
    });
  }

  async ask(
    token: string,
    holderId: string,
    request: RelayRequest,
    timeoutMs: number,
  ): Promise<RelayAnswer | 'gone' | 'timeout'> {
    await this.#listenForAnswers();
    const { channel } = this.#keys(token);
    const id = randomUUID();
    const sealed = this.#messages.sealPrivate(channel, { ...request, reply: this.replica, id });
    if (sealed === undefined) return 'gone';
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<RelayAnswer | 'timeout'>((resolve) => {
      this.#waiting.set(id, resolve);
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
      timer.unref();
    });
    try {
      let listeners: number;
      try {
        listeners = Number(await this.#redis.run((client) => client.publish(channel, sealed)));
      } catch {
        this.#redis.failed('sse');
        return 'timeout';
      }
      if (listeners === 0) {
        // No replica listens for the stream any more: its holder died with it.
        await this.#forget(token, holderId);
        return 'gone';
      }
      return await answered;
    } finally {
      clearTimeout(timer);
      this.#waiting.delete(id);
    }
  }

  #listenForAnswers(): Promise<() => void> {
    const channel = this.#answerChannel(this.replica);
    this.#answers ??= this.#redis.subscribe(channel, (text) => {
      const message = this.#messages.openPrivate(channel, text);
      if (!message || !isString(message.id, MAX_ID)) return;
      const answer = relayAnswerOf(message);
      if (answer) this.#waiting.get(message.id)?.(answer);
    });
    return this.#answers;
  }

  close(): void {
    void this.#answers?.then((stop) => stop());
    this.#answers = undefined;
  }
}
