/**
 * One payment, one order: the claim that `confirmPayment` makes on a payment for the order it
 * confirmed. The first confirmation of a payment that passes every check claims it; the same
 * order asking again holds it already; any other order is told that another holds it.
 *
 * With `CACHE_URL` the claims live in Redis, shared by every replica: one Lua script reads the
 * claim and, when there is none, writes it, so that of two confirmations at once on any two
 * replicas exactly one wins. The key names the payment only by a hash; the value (the order id
 * and when) is sealed with `CACHE_ENCRYPTION_KEY` as cached records are, bound to its key. Each
 * claim is kept `CONFIRMATION_RETENTION_DAYS`. Without Redis they live in this process's memory:
 * one replica, lost on restart (the start says so).
 *
 * A claim that cannot be made or read (Redis down, a value that does not open) confirms nothing:
 * the caller gets an error, never a `confirmed` it cannot stand behind.
 */
import { GatewayError } from '../errors.ts';
import { hashedKeyPart, luaScript, type RedisConnection } from '../redis/connection.ts';

/** Seals values at rest and opens them, bound to their place (the cache's AES-256-GCM). */
export interface ValueSeal {
  seal(place: string, text: string): string;
  /** Throws when the value was sealed for another place, with an unknown key, or altered. */
  open(place: string, stored: string): string;
}

/** Where the claims are kept. */
export interface ClaimStore {
  /**
   * Claims the payment for the order unless an order holds it already. True when `orderId` holds
   * it after the call (just claimed, or claimed by an earlier confirmation of the same order).
   */
  claim(txRef: string, orderId: string): Promise<boolean>;
  /** True when another order than `orderId` holds the payment. Claims nothing. */
  heldByAnother(txRef: string, orderId: string): Promise<boolean>;
}

/** What a claim records: the order and when it was confirmed (epoch ms). */
interface Claim {
  orderId: string;
  confirmedAt: number;
}

/** The claims cannot be reached: nothing is confirmed. */
function unavailable(): GatewayError {
  return new GatewayError(
    'UPSTREAM_UNAVAILABLE',
    'Payment confirmations are unavailable (their shared store does not answer); nothing was confirmed. Retry shortly.',
  );
}

/** A stored claim does not open: nothing is confirmed, and the operators must look. */
function unreadable(): GatewayError {
  return new GatewayError(
    'INTERNAL_SERVER_ERROR',
    "This payment's confirmation record cannot be read (sealed with a key the gateway does not hold, or altered); nothing was confirmed.",
  );
}

/**
 * Claims in this process's memory (no `CACHE_URL`). With one retention for all, insertion order
 * is expiry order, so expired claims leave from the front. Bounded: past `maxEntries` the
 * oldest claims are dropped first.
 */
export class MemoryClaimStore implements ClaimStore {
  readonly #claims = new Map<string, Claim & { until: number }>();
  readonly #retentionMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(retentionMs: number, maxEntries = 1_000_000, now: () => number = Date.now) {
    this.#retentionMs = retentionMs;
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  #holder(txRef: string): string | undefined {
    const now = this.#now();
    for (const [key, claim] of this.#claims) {
      if (claim.until > now) break;
      this.#claims.delete(key);
    }
    return this.#claims.get(txRef)?.orderId;
  }

  async claim(txRef: string, orderId: string): Promise<boolean> {
    const held = this.#holder(txRef);
    if (held !== undefined) return held === orderId;
    const now = this.#now();
    this.#claims.set(txRef, { orderId, confirmedAt: now, until: now + this.#retentionMs });
    if (this.#claims.size > this.#maxEntries) {
      const oldest = this.#claims.keys().next();
      if (!oldest.done) this.#claims.delete(oldest.value);
    }
    return true;
  }

  async heldByAnother(txRef: string, orderId: string): Promise<boolean> {
    const held = this.#holder(txRef);
    return held !== undefined && held !== orderId;
  }
}

/**
 * The claim, atomically: the value held when there is one, else the new value is set (with its
 * retention) and nil returned. Two scripts never interleave, on one Redis.
 */
const CLAIM = luaScript(`local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`);

/** The form of the claims' keys and values; another form is another key. */
const CLAIM_FORMAT = 'v1';

/** Claims in Redis (`CACHE_URL`), shared by every replica. */
export class RedisClaimStore implements ClaimStore {
  readonly #connection: RedisConnection;
  readonly #retentionMs: number;
  readonly #seal: ValueSeal | undefined;

  constructor(connection: RedisConnection, retentionMs: number, seal?: ValueSeal) {
    this.#connection = connection;
    this.#retentionMs = retentionMs;
    this.#seal = seal;
  }

  /** `<prefix>:confirm:v1:<hash of the txRef>`: no reference in clear. */
  key(txRef: string): string {
    return this.#connection.key('confirm', CLAIM_FORMAT, hashedKeyPart(txRef));
  }

  async claim(txRef: string, orderId: string): Promise<boolean> {
    const key = this.key(txRef);
    const claim: Claim = { orderId, confirmedAt: Date.now() };
    const text = JSON.stringify(claim);
    const value = this.#seal ? this.#seal.seal(key, text) : text;
    const held = await this.#redis(() =>
      this.#connection.script(CLAIM, [key], [value, String(this.#retentionMs)]),
    );
    if (held === null || held === undefined) return true;
    return this.#open(key, held).orderId === orderId;
  }

  async heldByAnother(txRef: string, orderId: string): Promise<boolean> {
    const key = this.key(txRef);
    const held = await this.#redis(() => this.#connection.run((client) => client.get(key)));
    return held !== null && this.#open(key, held).orderId !== orderId;
  }

  async #redis<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch {
      this.#connection.failed('confirm');
      throw unavailable();
    }
  }

  #open(key: string, stored: unknown): Claim {
    try {
      if (typeof stored !== 'string') throw new Error('not a string');
      const claim = JSON.parse(this.#seal ? this.#seal.open(key, stored) : stored) as Claim;
      if (typeof claim.orderId !== 'string') throw new Error('no order id');
      return claim;
    } catch {
      this.#connection.failed('confirm');
      throw unreadable();
    }
  }
}
