/**
 * Values set once per name, with a ledger: the store of `confirmPayment`'s claims in Redis. A
 * value is set only when none is held (one script reads and writes, so of two setters at once on
 * any two replicas exactly one wins), kept for its time. Each step also checks the ledger: a
 * marker written with the first value and looked at atomically with every step, so that a
 * store emptied or replaced under the gateway (a Redis restarted without persistence, a
 * failover to an empty replica, a `FLUSHALL`) is noticed — a holder that finds the marker it saw
 * gone or replaced marks the ledger lost for every holder, until an operator acknowledges it.
 * What a loss means is the caller's (payments/claims.ts); the scripts and their contract are in
 * state/scripts.ts. Failures throw.
 */
import { randomUUID } from 'node:crypto';
import type { RedisConnection } from './redis.ts';
import { CHECK_LEDGER, CLAIM, type LuaScript, READ_CLAIM } from './scripts.ts';

/** What a replica finds of the ledger and of Redis's durability, for the logs. */
export interface LedgerReport {
  /** `new`: no marker was there (first start, or a store emptied before this start). */
  ledger: 'new' | 'kept' | 'lost' | 'acknowledged';
  /** What `CONFIG GET` says, or why it could not be read. */
  durability: Durability;
}

/** Redis's durability as far as `CONFIG GET` tells it. */
export type Durability =
  | { readable: false; reason: string }
  | {
      readable: true;
      appendonly: string;
      appendfsync: string;
      maxmemoryPolicy: string;
      /** What in it can lose claims; empty when nothing. */
      risks: string[];
    };

/**
 * Reads `appendonly`, `appendfsync` and `maxmemory-policy`. Claims need the append-only file
 * (snapshots alone lose what came after the last one) and no eviction (claims carry a TTL, so
 * a `volatile-*` policy evicts them first). Managed Redis often refuses `CONFIG`: then it says so.
 */
async function readDurability(connection: RedisConnection): Promise<Durability> {
  let reply: Record<string, string>;
  try {
    reply = await connection.run((client) =>
      client.configGet(['appendonly', 'appendfsync', 'maxmemory-policy']),
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message.slice(0, 120) : 'unknown';
    return { readable: false, reason };
  }
  const appendonly = reply.appendonly ?? 'unknown';
  const appendfsync = reply.appendfsync ?? 'unknown';
  const maxmemoryPolicy = reply['maxmemory-policy'] ?? 'unknown';
  const risks: string[] = [];
  if (appendonly !== 'yes') risks.push('appendonly is not yes: a restart loses claims');
  else if (appendfsync === 'no') risks.push('appendfsync no: a crash may lose recent claims');
  if (maxmemoryPolicy !== 'noeviction') {
    risks.push(`maxmemory-policy ${maxmemoryPolicy}: claims may be evicted under memory pressure`);
  }
  return { readable: true, appendonly, appendfsync, maxmemoryPolicy, risks };
}

/** What a step found: the marker the ledger holds after it, and the value held (if any). */
export interface Ledgered {
  /** `''` or `lost:…`: the ledger is lost. */
  marker: string;
  held: string | undefined;
}

/** The ledger scripts' first arguments: the marker seen, a new one, the lost one. */
function ledgerArgs(seen: string): [string, string, string] {
  return [seen, `e:${randomUUID()}`, `lost:${new Date().toISOString()}`];
}

function markerOf(reply: unknown): string {
  return Array.isArray(reply) && typeof reply[0] === 'string' ? reply[0] : '';
}

/**
 * Values under `<prefix>:<namespace…>:<id>`, the ledger at `<prefix>:<namespace…>:ledger`; the
 * namespace should carry a hash tag (`{…}`), so that the ledger and every value share a slot on a
 * cluster. `legacyLedger`: the ledger of a previous layout, whose values this one does not hold:
 * while it stands, a holder that has seen no marker yet counts it as seen, so that a missing
 * ledger here reads as lost, not new; {@link acknowledge} deletes it.
 */
export class RedisLedger {
  readonly #redis: RedisConnection;
  readonly #namespace: readonly string[];
  readonly #legacy: string | undefined;

  constructor(
    redis: RedisConnection,
    namespace: readonly string[],
    legacyLedger?: readonly string[],
  ) {
    this.#redis = redis;
    this.#namespace = namespace;
    this.#legacy = legacyLedger && redis.key(...legacyLedger);
  }

  /** The full name of the value `id` (what it is sealed for). */
  name(id: string): string {
    return this.#redis.key(...this.#namespace, id);
  }

  /** The ledger's full name. */
  ledgerName(): string {
    return this.#redis.key(...this.#namespace, 'ledger');
  }

  #ledger(): string {
    return this.ledgerName();
  }

  /** `seen`, or (none seen yet) the previous layout's marker while it stands. */
  async #seen(seen: string): Promise<string> {
    if (seen !== '' || this.#legacy === undefined) return seen;
    const legacy = this.#legacy;
    return (await this.#redis.run((client) => client.get(legacy))) ?? '';
  }

  /**
   * Checks the ledger alone, `seen` being the marker this holder saw last (`''`: none yet);
   * `created`: there was no marker, and this check wrote one.
   */
  async check(seen: string): Promise<{ marker: string; created: boolean }> {
    const args = ledgerArgs(await this.#seen(seen));
    const marker = markerOf(await this.#redis.script(CHECK_LEDGER, [this.#ledger()], args));
    return { marker, created: marker === args[1] };
  }

  /** Sets `value` for `id`, kept `ttlMs`, unless a value is held: then the one held. */
  setOnce(id: string, seen: string, value: string, ttlMs: number): Promise<Ledgered> {
    return this.#step(CLAIM, id, seen, [value, String(ttlMs)]);
  }

  /** The value held for `id`, if any. */
  get(id: string, seen: string): Promise<Ledgered> {
    return this.#step(READ_CLAIM, id, seen, []);
  }

  async #step(script: LuaScript, id: string, seen: string, args: string[]): Promise<Ledgered> {
    const reply = await this.#redis.script(
      script,
      [this.#ledger(), this.name(id)],
      [...ledgerArgs(await this.#seen(seen)), ...args],
    );
    const held = (reply as unknown[])[1];
    return {
      marker: markerOf(reply),
      held: held === undefined || held === null ? undefined : String(held),
    };
  }

  /** Counts a failure of the store for `component` (metrics and a throttled log line). */
  failed(component: string): void {
    this.#redis.failed(component);
  }

  /** What Redis says of its durability. */
  durability(): Promise<Durability> {
    return readDurability(this.#redis);
  }

  /** The ledger's marker as it stands (none: `undefined`). */
  async marker(): Promise<string | undefined> {
    const key = this.#ledger();
    return (await this.#redis.run((client) => client.get(key))) ?? undefined;
  }

  /**
   * Acknowledges a lost ledger: every holder adopts the new marker at its next step. The previous
   * layout's ledger goes (its values are not carried over: this is the acknowledgement).
   */
  async acknowledge(): Promise<string> {
    const marker = `a:${randomUUID()}:${new Date().toISOString()}`;
    const key = this.#ledger();
    await this.#redis.run((client) => client.set(key, marker));
    const legacy = this.#legacy;
    if (legacy !== undefined) await this.#redis.run((client) => client.del(legacy));
    return marker;
  }
}
