/**
 * Where records come from: the cache first, then the upstream, with single flight across
 * requests and the TTL policy of the settings (`CACHE_TTL_*`). Created once per process; loaders wrap it per
 * request. Only records that every authorized caller may see are stored here: the resolvers
 * check access before asking.
 *
 * Stale on error: a transaction with a final status is kept `staleSeconds` past its TTL, and
 * served (reported through `onStale`) only when the payment service is down. Nothing else is
 * served stale, and reads that bypass the cache (mutations, live polls) never are.
 *
 * A fresh read always wins: a read that bypasses the cache (`verifyTransaction`, `confirmPayment`,
 * a live poll, the fetch after a signed notification) answers what the upstream said to it, made
 * for its caller alone, and stores it whatever its status (a payment read as SUCCESSFUL can since
 * have been reversed, refunded or charged back). Records never go back in time: every upstream
 * read is stored through RecordCache.store with the time it began, and a record whose read began
 * later, stored meanwhile, stands (and is what a cache miss serves).
 *
 * Unknown records (404 or a not-found envelope) are remembered for `ttlNotFoundSeconds`, so that
 * asking for them again and again does not reach the upstream each time; a read that bypasses the cache still
 * does, and overwrites the memory. Errors are never remembered.
 *
 * Reads for requests that have ended are not made: an upstream call still waiting for a slot of
 * its caller's share, or of the upstream's cap, is dropped once every request waiting for it
 * (several, through the single flight) has ended, and so is a wait for another replica's read of
 * the same record (no call, nothing stored). A call in flight runs to its end and its answer is
 * stored.
 */
import { hash } from 'node:crypto';
import type { CacheConfig } from '../config.ts';
import { type UpstreamName, UpstreamTimeoutError, UpstreamUnavailableError } from '../errors.ts';
import { RECORD_FORMAT, type UpstreamKycUser, type UpstreamTransaction } from '../model/records.ts';
import { isFinalStatus } from '../model/status.ts';
import { settled } from '../state/records.ts';
import type { KycClient, PaymentClient, Then } from '../upstream/clients.ts';
import type { Waiting } from '../upstream/http.ts';
import type { CachedEntry, RecordCache } from './store.ts';

export interface ReadOptions {
  /**
   * Skip the cache and read the upstream for this caller alone (joining no read that another
   * began earlier); the answer is what the upstream said, and is written.
   */
  bypassCache?: boolean;
  /** Told when the record served is a stale copy: its id and its age. */
  onStale?: (id: string, ageSeconds: number) => void;
  /**
   * The end of the request the read is for (its client gone): looked at when a call has to
   * wait, listened to only for a retry's sleep. Absent, the read is always made (a webhook's
   * read, a live poll).
   */
  end?: Waiting;
  /**
   * Runs the upstream call of a miss (the caller's share of upstream concurrency). `gone` says
   * whether any request still waits for the call; the gate asks it only of a call that waits,
   * and drops the call then instead of making it.
   */
  gate?: <T>(upstream: UpstreamName, work: () => Promise<T>, gone?: () => boolean) => Promise<T>;
}

export interface RecordSources {
  transaction(txRef: string, options?: ReadOptions): Promise<UpstreamTransaction | null>;
  kycUser(userRef: string, options?: ReadOptions): Promise<UpstreamKycUser | null>;
}

export interface SourceDeps {
  payment: Pick<PaymentClient, 'getTransaction'>;
  kyc: Pick<KycClient, 'getUser'>;
  cache: RecordCache;
  policy: CacheConfig;
  /** The business slug: part of the KYC key, since one store may serve several businesses. */
  businessSlug: string;
  /** Single flight across replicas (Redis); absent, the in-process single flight alone. */
  flightLock?: FlightLock;
}

/**
 * Single flight between processes: of the replicas that miss one key together, one runs the
 * work and the others wait for the value it stores.
 */
export interface FlightLock {
  /**
   * Runs `work` when this process wins the key, or returns what `stored` finds once the winner
   * has stored it; runs `work` itself when the wait is over or the winner gave up. `abandoned`
   * is asked only when this process has to wait: once it aborts, the wait ends, `work` is never
   * run, and the call rejects with the signal's reason.
   */
  run<T>(
    key: string,
    work: () => Promise<T>,
    stored: () => Promise<T | undefined>,
    abandoned?: () => AbortSignal,
  ): Promise<T>;
}

/** Cache keys name no person in clear: user references are hashed. */
function kycKey(slug: string, userRef: string): string {
  // The one-shot digest: no Hash object per read.
  const digest = hash('sha256', `${slug}\u0000${userRef}`, 'base64url');
  return `kyc:${RECORD_FORMAT}:${digest}`;
}

/** What a call that no request waits for any more rejects with (no one sees it). */
const ABANDONED = new DOMException('No request waits for this read any more.', 'AbortError');

/**
 * The requests waiting for one read, by their ends. {@link Waiters.gone} looks at each of them
 * (nothing made, nothing listened to); {@link Waiters.abandoned} listens to their signals, and
 * aborts once every one of them has ended. A waiter without an end never ends.
 */
class Waiters implements Waiting {
  /** The first waiter's end, and the others' in `#more` (an array made only for a second). */
  #first: Waiting | undefined;
  #more: Waiting[] | undefined;
  /** The waiters' signals, once the read listens to them (see `abandoned`). */
  #signals: AbortSignal[] | undefined;
  #forever = false;
  #settled = false;
  #gone: AbortController | undefined;
  /** Listens to the waiters' signals, from the first time the read asks until it settles. */
  #check: (() => void) | undefined;
  readonly #onGone: () => void;

  constructor(end: Waiting | undefined, onGone: () => void) {
    this.#onGone = onGone;
    this.join(end);
  }

  join(end: Waiting | undefined): void {
    // A read that has settled waits for nothing: its waiters are let go (see `settle`).
    if (this.#settled) return;
    if (!end) {
      this.#forever = true;
      this.close();
      return;
    }
    if (this.#forever) return;
    if (this.#first === undefined) this.#first = end;
    else if (this.#more) this.#more.push(end);
    else this.#more = [end];
    if (this.#check) this.#listen(end, this.#check);
  }

  /**
   * Whether every waiter has ended, asked at the moment (the read has not settled, and none of
   * its waiters lives on without an end). Looks at the waiters' ends without listening to them
   * or making their signals: a call waiting in a queue asks this when its turn comes, at no cost
   * while it waits.
   */
  readonly gone = (): boolean => {
    if (this.#forever || this.#settled) return false;
    if (this.#gone) return this.#gone.signal.aborted;
    if (!this.#allEnded()) return false;
    // Nobody waits: a request arriving now starts a read of its own.
    this.#onGone();
    return true;
  };

  #allEnded(): boolean {
    if (this.#first && !this.#first.gone()) return false;
    if (this.#more) for (const end of this.#more) if (!end.gone()) return false;
    return true;
  }

  #listen(end: Waiting, check: () => void): void {
    const signal = end.abandoned();
    if (this.#signals) this.#signals.push(signal);
    else this.#signals = [signal];
    signal.addEventListener('abort', check);
  }

  /** Aborted once every waiter has ended (never, once the read has settled). */
  readonly abandoned = (): AbortSignal => {
    if (this.#gone) return this.#gone.signal;
    const gone = new AbortController();
    this.#gone = gone;
    if (this.#forever || this.#settled) return gone.signal;
    const check = () => {
      if (this.#forever || gone.signal.aborted || !this.#allEnded()) return;
      this.close();
      this.#onGone();
      gone.abort(ABANDONED);
    };
    this.#check = check;
    if (this.#first) this.#listen(this.#first, check);
    if (this.#more) for (const end of this.#more) this.#listen(end, check);
    check();
    return gone.signal;
  };

  /** Whether every waiter has ended and the read's waiting call was dropped. */
  get ended(): boolean {
    return this.#gone?.signal.aborted === true;
  }

  /**
   * The read has settled: stops listening to the waiters and lets go of their ends, which reach
   * each request's whole state. Held until the flight is removed (after this turn), they kept
   * every request read through it alive across young collections.
   */
  settle(): void {
    this.#settled = true;
    this.close();
    this.#first = undefined;
    this.#more = undefined;
    this.#signals = undefined;
  }

  /** Stops listening to the waiters (the read has settled, or one waiter never ends). */
  close(): void {
    const check = this.#check;
    if (!check) return;
    this.#check = undefined;
    if (this.#signals)
      for (const signal of this.#signals) signal.removeEventListener('abort', check);
  }
}

/** A read shared through the single flight: its promise and waiters let go once it has left. */
interface Flight {
  key: string;
  promise: Promise<unknown> | undefined;
  waiters: Waiters | undefined;
}

/**
 * Single flight: concurrent calls for one key share one run of the work. The entry is removed
 * once the work has settled and the current turn of the event loop is over, so a failure is never
 * remembered, and a caller whose cache read missed just before the work stored its record (its
 * read resumes within the same turn) still joins this run instead of starting another. It is
 * removed at once when every request waiting for it has ended and its call is dropped, so that a
 * request arriving then starts a read of its own.
 */
class SingleFlight {
  readonly #inFlight = new Map<string, Flight>();
  /** Flights settled in this turn, removed together once it is over (one timer per turn). */
  #settled: Flight[] = [];

  run<T>(
    key: string,
    end: Waiting | undefined,
    work: (waiting: Waiting) => Promise<T>,
  ): Promise<T> {
    const existing = this.#inFlight.get(key);
    // A flight is emptied only after it has left the map: one found here is whole.
    if (existing?.promise && existing.waiters) {
      existing.waiters.join(end);
      return existing.promise as Promise<T>;
    }
    const waiters: Waiters = new Waiters(end, () => {
      if (this.#inFlight.get(key)?.waiters === waiters) this.#inFlight.delete(key);
    });
    const promise = work(waiters);
    const flight: Flight = { key, promise, waiters };
    // Dropped at once (its one request had already ended): nothing to join.
    if (!waiters.ended) this.#inFlight.set(key, flight);
    const release = () => {
      waiters.settle();
      if (this.#settled.push(flight) === 1) setImmediate(this.#sweep);
    };
    promise.then(release, release);
    return promise;
  }

  readonly #sweep = (): void => {
    const settled = this.#settled;
    this.#settled = [];
    for (const flight of settled) {
      if (this.#inFlight.get(flight.key) === flight) this.#inFlight.delete(flight.key);
      // Emptied once it has left: a table the map left behind in the old generation may still
      // point at it, and would keep its promise (the record) and its waiters alive through young
      // collections until the next full one (see http/under-way.ts). Emptied, S3 moved 2.1 MB to
      // the old generation per young collection instead of 3.2 MB.
      flight.promise = undefined;
      flight.waiters = undefined;
    }
  };
}

/** The upstream is down (as opposed to answering something wrong): stale may stand in. */
function isOutage(error: unknown): boolean {
  return error instanceof UpstreamUnavailableError || error instanceof UpstreamTimeoutError;
}

interface RecordKind<T> {
  name: string;
  upstream: UpstreamName;
  /**
   * `waiting`: asked only when the call has to wait or be retried; `since`: when the read's
   * time budget began (both: see UpstreamHttp.get); `then`: what the read returns for its
   * record, applied in the step that reads the answer (see PaymentClient.getTransaction).
   */
  fetch: <R>(
    id: string,
    waiting: Waiting | undefined,
    since: number,
    then: Then<T, R> | undefined,
  ) => Promise<R>;
  /** Fresh seconds and extra seconds kept for stale serving. */
  ttl: (record: T) => { ttl: number; keep: number };
}

/** A stale copy served in place of a read that failed: the record and when it was stored. */
class Stale<T> {
  readonly record: T;
  readonly storedAt: number;
  constructor(record: T, storedAt: number) {
    this.record = record;
    this.storedAt = storedAt;
  }
}

/**
 * What a read that failed with `error` answers: the kept copy when the upstream is down and one
 * was kept (only records stored with a keep window outlive their TTL), else the error.
 */
function staleOr<T>(kept: CachedEntry<T | null> | undefined, error: unknown): Stale<T> {
  if (kept?.value && isOutage(error)) return new Stale(kept.value, kept.storedAt);
  throw error;
}

/** Builds the record sources. */
export function createSources(deps: SourceDeps): RecordSources {
  const flights = new SingleFlight();
  const { cache, policy } = deps;
  // Each record's fresh and kept seconds, one object per case (not one per record).
  const finalTtl = { ttl: policy.ttlFinalSeconds, keep: policy.staleSeconds };
  const pendingTtl = { ttl: policy.ttlPendingSeconds, keep: 0 };
  const kycTtl = { ttl: policy.ttlKycSeconds, keep: 0 };
  const notFoundTtl = { ttl: policy.ttlNotFoundSeconds, keep: 0 };

  const transactionKind: RecordKind<UpstreamTransaction> = {
    name: 'transaction',
    upstream: 'payment',
    fetch: (txRef, waiting, since, then) =>
      deps.payment.getTransaction(txRef, waiting, since, then),
    ttl: (record) => (isFinalStatus(record.status) ? finalTtl : pendingTtl),
  };
  const kycKind: RecordKind<UpstreamKycUser> = {
    name: 'kyc',
    upstream: 'kyc',
    fetch: (userRef, waiting, since, then) => deps.kyc.getUser(userRef, waiting, since, then),
    ttl: () => kycTtl,
  };

  /**
   * Every read of the upstream ends here (a miss, a mutation, a live poll, a webhook's read):
   * the record is stored through {@link RecordCache.store}, which keeps one whose read began later
   * (records never go back in time). A read that bypassed the cache returns what the upstream
   * said; a miss returns the record that stands.
   */
  function fetchAndStore<T>(
    kind: RecordKind<T>,
    key: string,
    id: string,
    options: ReadOptions,
    waiting: Waiting | undefined,
  ): Promise<T | null> {
    // No async function (a suspended frame per record showed in allocation profiles); anything
    // thrown is a rejection, as it was there.
    try {
      // Taken before the call: a read that began earlier than a stored record's never replaces it.
      const fetchedAt = Date.now();
      // The read's time budget begins here: a call that waits for its caller's share first has
      // only what is left of it once its turn comes (none left: UPSTREAM_TIMEOUT, no call made).
      const since = performance.now();
      // The write is made in the step that reads the answer, not in a step of its own.
      const store = policy.benchNoWrite
        ? undefined
        : (record: T | null) => storeRead(kind, key, record, fetchedAt, options);
      return options.gate
        ? options.gate(kind.upstream, () => kind.fetch(id, waiting, since, store), waiting?.gone)
        : kind.fetch(id, waiting, since, store);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** {@link fetchAndStore}'s write, and what it then returns. */
  function storeRead<T>(
    kind: RecordKind<T>,
    key: string,
    record: T | null,
    fetchedAt: number,
    options: ReadOptions,
  ): T | null | Promise<T | null> {
    // An unknown reference is kept briefly: it may become known a moment later.
    const { ttl, keep } = record === null ? notFoundTtl : kind.ttl(record);
    const writing = cache.store<T | null>(kind.name, key, record, fetchedAt, ttl, keep);
    return settled(writing)
      ? afterWrite(kind, key, record, writing, options)
      : writing.then((written) => afterWrite(kind, key, record, written, options));
  }

  /** What a read returns once written: its record, or the fresher one that stood. */
  function afterWrite<T>(
    kind: RecordKind<T>,
    key: string,
    record: T | null,
    written: boolean,
    options: ReadOptions,
  ): T | null | Promise<T | null> {
    if (written || options.bypassCache) return record;
    const looking = cache.get<T | null>(kind.name, key);
    const standing = (entry: CachedEntry<T | null> | undefined) =>
      entry === undefined ? record : entry.value;
    return settled(looking) ? standing(looking) : looking.then(standing);
  }

  /**
   * The miss path, shared by concurrent callers through the single flight: the record, or a
   * {@link Stale} copy when the upstream is down and one was kept.
   */
  function load<T>(
    kind: RecordKind<T>,
    key: string,
    id: string,
    expired: CachedEntry<T | null> | undefined,
    options: ReadOptions,
    waiting: Waiting | undefined,
  ): Promise<T | null | Stale<T>> {
    // The in-process store: a request that stored this key after our miss did so within this
    // turn of the event loop, and its flight is still open (see SingleFlight): no re-read.
    if (!deps.flightLock) {
      const read = fetchAndStore(kind, key, id, options, waiting);
      // Only records stored with a keep window (final transactions) outlive their TTL.
      return expired?.value ? read.catch((error: unknown) => staleOr(expired, error)) : read;
    }
    return loadShared(deps.flightLock, kind, key, id, expired, options, waiting);
  }

  /** {@link load} with a shared store and the single flight across replicas. */
  async function loadShared<T>(
    flightLock: FlightLock,
    kind: RecordKind<T>,
    key: string,
    id: string,
    expired: CachedEntry<T | null> | undefined,
    options: ReadOptions,
    waiting: Waiting | undefined,
  ): Promise<T | null | Stale<T>> {
    let kept = expired;
    try {
      // Another replica, or a request of this one, may have filled the store meanwhile.
      const again = await cache.get<T | null>(kind.name, key);
      if (again && again.freshUntil > Date.now()) return again.value;
      kept = again ?? expired;
      // What another replica stored while this one waited (only fresh entries count).
      const stored = async () => {
        const entry = await cache.get<T | null>(kind.name, key);
        return entry && entry.freshUntil > Date.now() ? entry.value : undefined;
      };
      const work = () => fetchAndStore(kind, key, id, options, waiting);
      return await flightLock.run(key, work, stored, waiting?.abandoned);
    } catch (error) {
      return staleOr(kept, error);
    }
  }

  /** Concurrent calls for `key` share one run of `work` (not in the benchmark's bare runs). */
  const shared = <R>(
    key: string,
    options: ReadOptions,
    work: (waiting: Waiting | undefined) => Promise<R>,
  ): Promise<R> =>
    policy.benchNoSingleFlight ? work(options.end) : flights.run(key, options.end, work);

  /** What a lookup found: a fresh record, or (missing or expired) the shared read and its report. */
  function lookedUp<T>(
    kind: RecordKind<T>,
    key: string,
    id: string,
    options: ReadOptions,
    cached: CachedEntry<T | null> | undefined,
  ): Promise<T | null> {
    if (cached && cached.freshUntil > Date.now()) {
      cache.report(kind.name, 'hit');
      return Promise.resolve(cached.value);
    }
    // A `then` rather than an async function, as in fetchAndStore.
    return shared(key, options, (waiting) => load(kind, key, id, cached, options, waiting)).then(
      (outcome) => {
        if (!(outcome instanceof Stale)) {
          cache.report(kind.name, 'miss');
          return outcome;
        }
        cache.report(kind.name, 'stale');
        options.onStale?.(id, Math.max(0, Math.round((Date.now() - outcome.storedAt) / 1000)));
        return outcome.record;
      },
    );
  }

  function read<T>(
    kind: RecordKind<T>,
    key: string,
    id: string,
    options: ReadOptions,
  ): Promise<T | null> {
    if (options.bypassCache) {
      return fetchAndStore(kind, key, id, options, options.end);
    }
    const looking = cache.get<T | null>(kind.name, key);
    return settled(looking)
      ? lookedUp(kind, key, id, options, looking)
      : looking.then((cached) => lookedUp(kind, key, id, options, cached));
  }

  return {
    transaction: (txRef, options = {}) =>
      read(transactionKind, `tx:${RECORD_FORMAT}:${txRef}`, txRef, options),
    kycUser: (userRef, options = {}) =>
      read(kycKind, kycKey(deps.businessSlug, userRef), userRef, options),
  };
}
