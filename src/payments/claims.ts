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
 *
 * Claims are never silently lost. A Redis restarted without persistence, a failover to an empty
 * replica or a `FLUSHALL` would forget every claim, and a payment would then confirm a second
 * order. So the claims carry a marker (the ledger), written with the first claim and checked
 * atomically with every claim, at start and at every reconnection: each replica remembers the
 * marker it saw, and one that finds it gone or replaced marks the ledger lost, for every replica
 * (those started since included). From then on `confirmPayment` confirms nothing — an error that
 * says why — until an operator acknowledges it (`npm run claims:acknowledge`). Claims kept in
 * this process's memory are refused the same way in production, unless `ALLOW_MEMORY_CLAIMS`.
 */

import { GatewayError } from '../errors.ts';
import type { Ledgered, LedgerReport, RedisLedger } from '../state/claims.ts';
import { hashedKeyPart } from '../state/index.ts';

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

/**
 * The claims cannot be trusted to be all there: nothing is confirmed until an operator has
 * looked. `extensions.reason` tells a client's code which case this is.
 */
export class ClaimsUnverifiedError extends GatewayError {
  constructor(why: string) {
    super(
      'UPSTREAM_UNAVAILABLE',
      `Payment confirmations are suspended: ${why}. Nothing was confirmed, so no payment can confirm a second order; an operator must check and acknowledge it. Retry later.`,
      { reason: 'CLAIMS_UNVERIFIED' },
    );
  }
}

const LEDGER_LOST =
  'the store of earlier confirmations was emptied or replaced while the gateway ran (a Redis restarted without persistence, a failover, or a flush)';
const MEMORY_IN_PRODUCTION =
  "claims would be kept only in this process's memory (no CACHE_URL), forgotten on restart";

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
  readonly #refuse: boolean;

  /** `refuse`: confirm nothing (production, where memory is no place for claims unless allowed). */
  constructor(
    retentionMs: number,
    options: { maxEntries?: number; now?: () => number; refuse?: boolean } = {},
  ) {
    this.#retentionMs = retentionMs;
    this.#maxEntries = options.maxEntries ?? 1_000_000;
    this.#now = options.now ?? Date.now;
    this.#refuse = options.refuse ?? false;
  }

  #holder(txRef: string): string | undefined {
    if (this.#refuse) throw new ClaimsUnverifiedError(MEMORY_IN_PRODUCTION);
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
 * The claims' keys, `<prefix>:{confirm:v2}:…` (`v2`: the form of keys and values; another form is
 * another key), for the store and for `npm run claims:acknowledge`. One hash tag for the claims
 * and their ledger: every claims script checks the ledger with the claim, so on a cluster every
 * claim is on the ledger's slot.
 */
export const CLAIMS_NAMESPACE = ['{confirm:v2}'] as const;

/**
 * The ledger of the previous layout (`<prefix>:confirm:v1:…`, without a hash tag). A replica that
 * finds it, and no ledger of this layout, saw claims this layout does not hold: it marks the
 * ledger lost and confirms nothing until an operator acknowledges (which deletes it).
 */
export const CLAIMS_LEGACY_LEDGER = ['confirm', 'v1', 'ledger'] as const;

/**
 * The one business's ledger (`<prefix>:{confirm:v2}:ledger`), as each business of a businesses
 * file sees it: the claims made before the gateway served a file are under the one business's
 * keys, which no business's namespace holds. While that ledger stands, a business's missing ledger
 * reads as lost (nothing confirmed until an operator acknowledges that business), not as new.
 */
export const CLAIMS_SINGLE_BUSINESS_LEDGER = [...CLAIMS_NAMESPACE, 'ledger'] as const;

/** Claims in Redis (`CACHE_URL`), shared by every replica, through the state's ledger. */
export class RedisClaimStore implements ClaimStore {
  readonly #ledger: RedisLedger;
  readonly #retentionMs: number;
  readonly #seal: ValueSeal | undefined;
  readonly #onLost: () => void;
  /** The ledger marker this replica saw; '' until it has seen one. */
  #seen = '';
  /** Whether the last step found the ledger lost (to tell `onLost` once per loss). */
  #lost = false;

  /**
   * `ledger`: the state's ledger under {@link CLAIMS_NAMESPACE}. `onLost`: told once each time
   * this replica finds the ledger lost (for a loud log line).
   */
  constructor(
    ledger: RedisLedger,
    retentionMs: number,
    seal?: ValueSeal,
    onLost: () => void = () => {},
  ) {
    this.#ledger = ledger;
    this.#retentionMs = retentionMs;
    this.#seal = seal;
    this.#onLost = onLost;
  }

  /** `<prefix>:{confirm:v2}:<hash of the txRef>`: no reference in clear. */
  key(txRef: string): string {
    return this.#ledger.name(hashedKeyPart(txRef));
  }

  async claim(txRef: string, orderId: string): Promise<boolean> {
    const key = this.key(txRef);
    const claim: Claim = { orderId, confirmedAt: Date.now() };
    const text = JSON.stringify(claim);
    const value = this.#seal ? this.#seal.seal(key, text) : text;
    const held = await this.#ledgered(() =>
      this.#ledger.setOnce(hashedKeyPart(txRef), this.#seen, value, this.#retentionMs),
    );
    if (held === undefined) return true;
    return this.#open(key, held).orderId === orderId;
  }

  async heldByAnother(txRef: string, orderId: string): Promise<boolean> {
    const key = this.key(txRef);
    const held = await this.#ledgered(() => this.#ledger.get(hashedKeyPart(txRef), this.#seen));
    return held !== undefined && this.#open(key, held).orderId !== orderId;
  }

  /**
   * Checks the ledger (at start and at every reconnection) and reads what Redis says of its
   * durability. Throws when Redis does not answer.
   */
  async inspect(): Promise<LedgerReport> {
    const before = this.#seen;
    const { marker: found, created } = await this.#ledger.check(before);
    const marker = this.#adopt(found);
    const ledger = marker.startsWith('lost:')
      ? 'lost'
      : created
        ? 'new'
        : before !== '' && marker !== before
          ? 'acknowledged'
          : 'kept';
    return { ledger, durability: await this.#ledger.durability() };
  }

  /** Remembers the marker a step left (and tells of a loss found); returns it. */
  #adopt(marker: string): string {
    const lost = marker === '' || marker.startsWith('lost:');
    if (lost && !this.#lost) this.#onLost();
    this.#lost = lost;
    if (!lost) this.#seen = marker;
    return marker;
  }

  /** Runs a step with the ledger's check; the claim held, or throws when it is lost. */
  async #ledgered(step: () => Promise<Ledgered>): Promise<string | undefined> {
    let reply: Ledgered;
    try {
      reply = await step();
    } catch {
      this.#ledger.failed('confirm');
      throw unavailable();
    }
    this.#adopt(reply.marker);
    if (this.#lost) throw new ClaimsUnverifiedError(LEDGER_LOST);
    return reply.held;
  }

  #open(key: string, stored: unknown): Claim {
    try {
      if (typeof stored !== 'string') throw new Error('not a string');
      const claim = JSON.parse(this.#seal ? this.#seal.open(key, stored) : stored) as Claim;
      if (typeof claim.orderId !== 'string') throw new Error('no order id');
      return claim;
    } catch {
      this.#ledger.failed('confirm');
      throw unreadable();
    }
  }
}
