/**
 * The clients of the two REST interfaces — the payment interface (`GET
 * /pg/api/v1/transaction/status/{txRef}` with the access token) and the KYC interface (`GET
 * /api/v1/user/kyc?userRef=…&slug=…` with the secret key) — and the one rule set by which both
 * turn an HTTP answer into a normalized record, `null` (unknown) or a gateway error.
 */
import type { KycUpstreamConfig, PaymentUpstreamConfig, UpstreamPolicyConfig } from '../config.ts';
import {
  UpstreamAuthFailedError,
  UpstreamBadResponseError,
  type UpstreamName,
  UpstreamUnavailableError,
} from '../errors.ts';
import type { UpstreamKycUser, UpstreamTransaction } from '../model/records.ts';
import type { Tracing } from '../observability/tracing.ts';
import {
  type BreakerState,
  type HttpResult,
  UpstreamHttp,
  type UpstreamObserver,
  type Waiting,
} from './http.ts';
import {
  describeIssue,
  moneySourceReviver,
  scanJson,
  UpstreamIssue,
  type UpstreamShape,
  type UpstreamShapes,
  upstreamShapes,
} from './shapes.ts';

/** A message in an error envelope that says the record does not exist. */
// Only these phrases: "Unknown error, please retry" says nothing about the record, and a null
// there would tell a merchant that a real payment does not exist.
const NOT_FOUND =
  /not\s*found|does\s*not\s*exist|doesn't\s*exist|no\s+such\s+user|unknown\s+(user|transaction|reference)/i;

/**
 * Reads an answer: 404 and "not found" envelopes are `null`; 401/403 are the gateway's own
 * credentials refused; 429 and 5xx (after retries) are unavailability; anything else that is
 * not the documented JSON is a bad response. Never quotes the body. `reviver` sees the JSON
 * text of each value as it is parsed (its third argument), before numbers become doubles.
 */
export function readAnswer<T>(
  upstream: UpstreamName,
  result: HttpResult,
  shape: UpstreamShape<T>,
  reviver?: (key: string, value: unknown, context?: { source?: string }) => unknown,
  identity?: { field: string; value: string },
): T | null {
  const { status } = result;
  if (status === 404) return null;
  if (status === 401 || status === 403) throw new UpstreamAuthFailedError(upstream, status);
  if (status === 429) throw new UpstreamUnavailableError(upstream, 'rate limited by the upstream');
  if (status >= 500) throw new UpstreamUnavailableError(upstream, `HTTP ${status}`);
  if (status < 200 || status >= 300) {
    throw new UpstreamBadResponseError(upstream, `unexpected HTTP ${status}`);
  }
  // Before any parse: nesting and number length bounded in one linear pass. A number of more
  // than 15 significant digits (which a double may not keep) calls for the reviver, which sees
  // each value's source text but makes JSON.parse several times slower: only then.
  const scan = scanJson(result.body);
  if (!scan.ok) throw new UpstreamBadResponseError(upstream, scan.reason);
  let json: unknown;
  try {
    json = JSON.parse(result.body, reviver && scan.longDigits ? reviver : undefined);
  } catch {
    throw new UpstreamBadResponseError(upstream, 'the body is not JSON');
  }
  // The envelope's flag, read by hand: a second schema pass per answer showed in profiles.
  if (typeof json === 'object' && json !== null && 'error' in json) {
    const { error, message } = json as { error: unknown; message?: unknown };
    if (error === true || error === 'true') {
      if (typeof message === 'string' && NOT_FOUND.test(message)) return null;
      throw new UpstreamBadResponseError(upstream, 'it reported an error');
    }
  }
  // The record must be the one asked for: an answer naming another (a proxy's cache mixing
  // users, an upstream bug) is never served under the asked reference.
  if (identity && typeof json === 'object' && json !== null) {
    const data = (json as { data?: unknown }).data;
    const named =
      typeof data === 'object' && data !== null
        ? (data as Record<string, unknown>)[identity.field]
        : undefined;
    if (named !== undefined && named !== null && named !== identity.value) {
      throw new UpstreamBadResponseError(upstream, 'the answer is for another record');
    }
  }
  // `parse` rather than `safeParse`: no result object per record.
  try {
    return shape.parse(json);
  } catch (error) {
    if (error instanceof UpstreamIssue) {
      throw new UpstreamBadResponseError(upstream, describeIssue(error));
    }
    throw error;
  }
}

/**
 * What a read returns for its record (`null`: unknown), applied in the step that reads the answer;
 * a promise only where it must wait (a write to Redis).
 */
export type Then<T, R> = (record: T | null) => R | PromiseLike<R>;

/** The record as it is: a read's default {@link Then}. */
function asIs<T>(record: T | null): T | null {
  return record;
}

/** What both clients share: the HTTP policy of one upstream and the shapes of one time zone. */
abstract class UpstreamClient {
  protected readonly http: UpstreamHttp;
  protected readonly shapes: UpstreamShapes;

  /** `timeZone`: the IANA zone in which the record's times are read. */
  constructor(
    name: UpstreamName,
    baseUrl: string,
    policy: UpstreamPolicyConfig,
    observer: UpstreamObserver | undefined,
    timeZone: string,
    tracing: Tracing | undefined,
  ) {
    this.http = new UpstreamHttp({
      name,
      baseUrl,
      policy,
      ...(observer && { observer }),
      ...(tracing && { tracing }),
    });
    this.shapes = upstreamShapes(timeZone);
  }

  /** The state of this upstream's circuit breaker. */
  get breakerState(): BreakerState {
    return this.http.breakerState;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

export class PaymentClient extends UpstreamClient {
  readonly #headers: Record<string, string>;

  constructor(
    config: PaymentUpstreamConfig,
    policy: UpstreamPolicyConfig,
    observer?: UpstreamObserver,
    timeZone = 'UTC',
    tracing?: Tracing,
  ) {
    super('payment', config.baseUrl, policy, observer, timeZone, tracing);
    this.#headers = { accept: 'application/json', authorization: `Bearer ${config.accessToken}` };
  }

  /**
   * The transaction with this reference, normalized, `null` when the payment service does not
   * know it. The caller has checked the reference against TX_REF. `waiting` and `since`: see
   * {@link UpstreamHttp.get}. `then` (default: the record as it is) is what the read returns
   * for the record, applied in the same step (the record sources store it there).
   */
  getTransaction<R = UpstreamTransaction | null>(
    txRef: string,
    waiting?: Waiting,
    since?: number,
    then: Then<UpstreamTransaction, R> = asIs as Then<UpstreamTransaction, R>,
  ): Promise<R> {
    // The answer is read in the step that ends the call (no async function, no step of its
    // own): one of the few steps every record takes, where each showed in allocation profiles.
    return this.http.get(
      `/pg/api/v1/transaction/status/${encodeURIComponent(txRef)}`,
      this.#headers,
      (result) => {
        const answer = readAnswer(
          'payment',
          result,
          this.shapes.transactionResponse,
          moneySourceReviver,
          // The documented answer names no reference; one that names another is refused.
          { field: 'txRef', value: txRef },
        );
        if (answer === null) return then(null);
        // The shape's output is a new object of its own: completed in place rather than copied.
        return then(Object.assign(answer.data, { txRef, event: answer.event }));
      },
      waiting,
      undefined,
      since,
    );
  }
}

export class KycClient extends UpstreamClient {
  readonly #headers: Record<string, string>;
  readonly #slug: string;

  constructor(
    config: KycUpstreamConfig,
    policy: UpstreamPolicyConfig,
    observer?: UpstreamObserver,
    timeZone = 'UTC',
    tracing?: Tracing,
  ) {
    super('kyc', config.baseUrl, policy, observer, timeZone, tracing);
    this.#headers = { accept: 'application/json', 'x-secret-key': config.secretKey };
    this.#slug = config.businessSlug;
  }

  /**
   * The KYC details of this user of the configured business, normalized; `null` when unknown.
   * `waiting`, `since` and `then`: see {@link PaymentClient.getTransaction}.
   */
  getUser<R = UpstreamKycUser | null>(
    userRef: string,
    waiting?: Waiting,
    since?: number,
    then: Then<UpstreamKycUser, R> = asIs as Then<UpstreamKycUser, R>,
  ): Promise<R> {
    // The provider's first example also sends a JSON body on this GET; the consistent form is
    // the query string alone, and a body on GET is dropped by many proxies, so none is sent.
    const query = new URLSearchParams({ userRef, slug: this.#slug });
    return this.http.get(
      `/api/v1/user/kyc?${query.toString()}`,
      this.#headers,
      (result) => {
        const answer = readAnswer('kyc', result, this.shapes.kycResponse, undefined, {
          field: 'userRef',
          value: userRef,
        });
        if (answer === null) return then(null);
        // The reference asked by, when the upstream leaves it out of the record (completed in
        // place: the shape's output is a new object of its own).
        return then(Object.assign(answer.data, { userRef: answer.data.userRef ?? userRef }));
      },
      waiting,
      undefined,
      since,
    );
  }
}
