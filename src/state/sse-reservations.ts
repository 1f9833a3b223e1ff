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
 * Keys and channels (under `CACHE_KEY_PREFIX`), `<h>` the token's digest; a token's keys share
 * the hash tag `{sse:<h>}` (one slot on a cluster: its scripts touch both):
 * - `{sse:<h>}:reservation`: the caller, sealed; expires when the reservation is unused, then
 *   with the holder's lease;
 * - `{sse:<h>}:holder`: the holding replica's random id; a lease (`leaseMs`);
 * - channel `{sse:<h>}:stream`: requests for the stream, heard by its holder alone;
 * - channel `sse:answers:<replica id>`: answers to the requests that replica relayed.
 *
 * The scripts are state/scripts.ts's `SSE_*`; the channels are the state layer's, through one
 * codec (the live channels' private messages).
 */
import { randomUUID } from 'node:crypto';
import { Sealer, type SealKeys } from '../cache/seal.ts';
import { type LiveMessages, MESSAGE_MAX_AGE_MS } from '../live/messages.ts';
import { type Channels, SealedChannels } from './channel.ts';
import { hashedKeyPart, type RedisConnection } from './redis.ts';
import { SSE_CLAIM, SSE_DROP, SSE_RENEW } from './scripts.ts';

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
  readonly #channels: SealedChannels<Record<string, unknown>>;
  /** Relayed requests waiting for their answer, by request id. */
  readonly #waiting = new Map<string, (answer: RelayAnswer) => void>();
  #answers: Promise<() => void> | undefined;

  /**
   * `channels`: the state layer's (Redis). `messages` must seal (a cache key is set): what
   * travels here holds personal data.
   */
  constructor(redis: RedisConnection, channels: Channels, keys: SealKeys, messages: LiveMessages) {
    if (!messages.sealed) throw new Error('shared reservations need the cache key');
    this.#redis = redis;
    this.#sealer = new Sealer(keys);
    this.#channels = new SealedChannels(channels, {
      seal: (channel, message) => {
        const sealed = messages.sealPrivate(channel, message);
        if (sealed === undefined) throw new Error('shared reservations need the cache key');
        return sealed;
      },
      open: (channel, text) => messages.openPrivate(channel, text),
    });
  }

  #keys(token: string) {
    const tag = `{sse:${hashedKeyPart(token)}}`;
    return {
      reservation: this.#redis.key(tag, 'reservation'),
      holder: this.#redis.key(tag, 'holder'),
      channel: this.#redis.key(tag, 'stream'),
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
        SSE_CLAIM,
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
      .script(SSE_RENEW, [reservation, holder], [this.replica, String(leaseMs)])
      .catch(() => this.#redis.failed('sse'));
  }

  async drop(token: string): Promise<void> {
    await this.#forget(token, this.replica);
  }

  async #forget(token: string, holderId: string): Promise<void> {
    const { reservation, holder } = this.#keys(token);
    await this.#redis
      .script(SSE_DROP, [reservation, holder], [holderId])
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
    return this.#channels.subscribe(channel, (message) => {
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
      void serve(request).then((answer) =>
        this.#channels
          .publish(this.#answerChannel(reply), { id, ...answer })
          .catch(() => this.#redis.failed('sse')),
      );
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
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<RelayAnswer | 'timeout'>((resolve) => {
      this.#waiting.set(id, resolve);
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
      timer.unref();
    });
    try {
      let listeners: number;
      try {
        listeners = await this.#channels.publish(channel, { ...request, reply: this.replica, id });
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
    this.#answers ??= this.#channels.subscribe(channel, (message) => {
      if (!isString(message.id, MAX_ID)) return;
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
