/**
 * Prometheus metrics (prom-client), one registry per gateway (no global state, so tests can run
 * several gateways). Labels hold only bounded, non-personal values: upstream names, outcomes,
 * error codes, cache kinds, operation names that pass a strict pattern and that a few callers
 * cannot crowd out (see operationLabel; others are `other`), and, when several businesses are
 * served, the `business` of the request, upstream call, notification or confirmation: an id of
 * the businesses file (a token naming any other is refused before anything is counted under it;
 * a business a reload removes has its series removed with it). With one business there is no
 * `business` label: the series are those of a gateway that never had several.
 */
import { LRUCache } from 'lru-cache';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

const OPERATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Most operation names labelled at once besides the trusted ones; the others are `other`. */
const MAX_OPERATION_LABELS = 200;
/** prom-client's default gauges whose names end in `_total` (see the constructor). */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];
/** The upstream latency histogram, whose count per series is also the upstream call counter. */
const UPSTREAM_LATENCY = 'gateway_upstream_request_duration_seconds';
/** Its per-series count sample, as prom-client names it. */
const UPSTREAM_LATENCY_COUNT = `${UPSTREAM_LATENCY}_count`;
/** Observations kept before they are made without waiting for a read of the metrics. */
const PENDING_OBSERVATIONS = 1024;
/** Distinct callers that must send a name before it gets a label of its own. */
const CALLERS_FOR_LABEL = 3;
/** A label unused this long gives its slot back (and its series are removed). */
const LABEL_IDLE_MS = 60 * 60 * 1000;
/** Names waiting for enough callers, and callers remembered per name (bounded). */
const MAX_CANDIDATES = 2000;

/** The `business` label of a series: `{ business: id }` with several businesses, else `{}`. */
export type BusinessLabel = { readonly business?: string };
/** No `business` label (one business, or a request refused before its business was known). */
export const NO_BUSINESS: BusinessLabel = Object.freeze({});

/**
 * Observations of one histogram kept in two arrays (each one's label object, made once per
 * series, and its value) and made by the histogram when it is read (its `collect`), or soon
 * after {@link PENDING_OBSERVATIONS} have gathered. prom-client's observation, made for each
 * request or call as it ended, took 1.5–3.5 µs between the other steps of a request; made in a
 * loop, a fraction of that. A read sees every observation made before it.
 */
class PendingObservations<L extends string> {
  readonly #histogram: Histogram<L>;
  readonly #labels: Array<Readonly<Partial<Record<L, string>>>> = [];
  readonly #values: number[] = [];
  #scheduled = false;
  readonly #flushSoon = (): void => this.flush();

  /** `histogram`: the one that makes them. */
  constructor(histogram: Histogram<L>) {
    this.#histogram = histogram;
  }

  /** Observations kept, not yet made (bounded: see {@link add}). */
  get size(): number {
    return this.#labels.length;
  }

  add(labels: Readonly<Partial<Record<L, string>>>, value: number): void {
    const count = this.#labels.push(labels);
    this.#values.push(value);
    if (count >= PENDING_OBSERVATIONS && !this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flushSoon);
    }
  }

  flush(): void {
    this.#scheduled = false;
    const histogram = this.#histogram;
    const labels = this.#labels;
    const values = this.#values;
    for (let i = 0; i < labels.length; i += 1) {
      histogram.observe(labels[i] as Partial<Record<L, string>>, values[i] as number);
    }
    labels.length = 0;
    values.length = 0;
  }
}

/** The map held under `key` in `outer`, made (empty) when first asked for. */
function innerMap<K, V>(outer: Map<string, Map<K, V>>, key: string): Map<K, V> {
  let inner = outer.get(key);
  if (!inner) {
    inner = new Map();
    outer.set(key, inner);
  }
  return inner;
}

/** The labels of a request's duration. */
type DurationLabel = Readonly<{ operation_type: string } & BusinessLabel>;

export class GatewayMetrics {
  readonly registry = new Registry();
  /** The project's own operations (trusted documents): always labelled. */
  readonly #trusted = new Set<string>();
  /** Other names that earned a label; a slot unused for LABEL_IDLE_MS is given back. */
  readonly #labelled = new LRUCache<string, true>({
    max: MAX_OPERATION_LABELS,
    ttl: LABEL_IDLE_MS,
    updateAgeOnGet: true,
    ttlAutopurge: true,
    // A slot given back: its series go too, so the label set stays bounded over time.
    dispose: (_, name) => void this.#forget(name),
  });
  /** Names seen from fewer than CALLERS_FOR_LABEL callers so far, with those callers. */
  readonly #candidates = new LRUCache<string, Set<string>>({ max: MAX_CANDIDATES });

  /** Requests since the counter was last read, by business id ('' for none), operation, outcome. */
  #requestTally = new Map<string, Map<string, { ok: number; error: number }>>();

  /** Counted through {@link request}. */
  readonly graphqlRequests: Counter<'operation' | 'outcome' | 'business'> = new Counter({
    name: 'gateway_graphql_requests_total',
    help: 'GraphQL requests, by operation name and outcome (ok or error).',
    labelNames: ['operation', 'outcome', 'business'] as const,
    registers: [this.registry],
    collect: (): void => {
      const tally = this.#requestTally;
      // Emptied, not zeroed: the series of operations and businesses gone since leave no entry.
      this.#requestTally = new Map();
      for (const [business, byOperation] of tally) {
        const label = business === '' ? NO_BUSINESS : { business };
        for (const [operation, { ok, error }] of byOperation) {
          if (ok > 0) this.graphqlRequests.inc({ operation, outcome: 'ok', ...label }, ok);
          if (error > 0) this.graphqlRequests.inc({ operation, outcome: 'error', ...label }, error);
        }
      }
    },
  });

  /**
   * A request answered, under its operation's label (see {@link operationLabel}): numbers added
   * to, handed to {@link graphqlRequests} when it is read.
   */
  request(operation: string, outcome: 'ok' | 'error', business: BusinessLabel = NO_BUSINESS): void {
    const byOperation = innerMap(this.#requestTally, business.business ?? '');
    let counts = byOperation.get(operation);
    if (!counts) {
      counts = { ok: 0, error: 0 };
      byOperation.set(operation, counts);
    }
    counts[outcome] += 1;
  }

  readonly graphqlErrors = new Counter({
    name: 'gateway_graphql_errors_total',
    help: 'GraphQL errors returned, by operation name and extensions.code.',
    labelNames: ['operation', 'code', 'business'] as const,
    registers: [this.registry],
  });

  /**
   * Queries and mutations (and requests refused before an operation was known: `none`),
   * observed through {@link observeDuration}.
   */
  readonly requestDuration: Histogram<'operation_type' | 'business'> = new Histogram({
    name: 'gateway_graphql_request_duration_seconds',
    help: 'Time to answer a GraphQL query or mutation, by operation type (subscriptions apart).',
    labelNames: ['operation_type', 'business'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
    collect: () => this.#pendingDurations.flush(),
  });
  readonly #pendingDurations = new PendingObservations(this.requestDuration);
  /** The label objects of {@link requestDuration}, by business id ('' for none) and type. */
  readonly #durationLabels = new Map<string, Map<string, DurationLabel>>();

  /** Subscriptions over HTTP (SSE, multipart) last as long as the client listens. */
  readonly subscriptionDuration = new Histogram({
    name: 'gateway_graphql_subscription_duration_seconds',
    help: 'How long a GraphQL subscription over HTTP stayed open.',
    labelNames: ['business'] as const,
    buckets: [0.1, 1, 5, 15, 30, 60, 300, 900, 1800, 3600],
    registers: [this.registry],
  });

  /** Requests received and not answered yet, counted by {@link requestStarted} and its end. */
  #inFlight = 0;

  readonly requestsInFlight: Gauge = new Gauge({
    name: 'gateway_graphql_requests_in_flight',
    help: 'GraphQL requests received and not answered yet (streams included).',
    registers: [this.registry],
    collect: (): void => this.requestsInFlight.set(this.#inFlight),
  });

  /** A request received (a plain count, set on the gauge when it is read). */
  requestStarted(): void {
    this.#inFlight += 1;
  }

  /** A request answered. */
  requestEnded(): void {
    this.#inFlight -= 1;
  }

  /**
   * Every call is observed once, in {@link upstreamLatency}: this counter is that histogram's
   * count per series, copied when the metrics are read (one observation per call instead of two;
   * in the running gateway each prom-client observation took 1.5–3.5 µs).
   */
  readonly upstreamCalls: Counter<'upstream' | 'outcome' | 'business'> = new Counter({
    name: 'gateway_upstream_requests_total',
    help: 'HTTP calls to an upstream, by upstream and outcome.',
    labelNames: ['upstream', 'outcome', 'business'] as const,
    registers: [this.registry],
    collect: () => this.#copyUpstreamCounts(),
  });

  /** Observed through {@link upstreamCall}: read it (`get`, a scrape) for every call so far. */
  readonly upstreamLatency: Histogram<'upstream' | 'outcome' | 'business'> = new Histogram({
    name: UPSTREAM_LATENCY,
    help: 'Duration of one HTTP call to an upstream.',
    labelNames: ['upstream', 'outcome', 'business'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
    collect: () => this.#pendingCalls.flush(),
  });
  readonly #pendingCalls = new PendingObservations(this.upstreamLatency);

  /**
   * One upstream call (every call has one), its labels made once per series by the caller: kept
   * until the histogram is read (see PendingObservations).
   */
  upstreamCall(labels: Readonly<Record<string, string>>, seconds: number): void {
    this.#pendingCalls.add(labels, seconds);
  }

  /** Upstream calls kept, not yet observed (bounded: see PendingObservations). */
  get pendingUpstreamCalls(): number {
    return this.#pendingCalls.size;
  }

  readonly upstreamRetries = new Counter({
    name: 'gateway_upstream_retries_total',
    help: 'Retries of upstream reads.',
    labelNames: ['upstream', 'business'] as const,
    registers: [this.registry],
  });

  readonly upstreamRejected = new Counter({
    name: 'gateway_upstream_rejected_total',
    help: "Upstream reads ended without a call, by reason (circuit_open; concurrency: the queue for a slot was full, or the read's time budget ran out while it waited for one, at the upstream's cap or in its caller's share).",
    labelNames: ['upstream', 'reason', 'business'] as const,
    registers: [this.registry],
  });

  readonly breakerState = new Gauge({
    name: 'gateway_upstream_circuit_state',
    help: 'Circuit breaker state per upstream: 0 closed, 1 open, 2 half-open.',
    labelNames: ['upstream', 'business'] as const,
    registers: [this.registry],
  });

  /** Counted by {@link cacheEvent} in plain numbers, handed to the counter when it is read. */
  readonly cacheEvents: Counter<'kind' | 'outcome'> = new Counter({
    name: 'gateway_cache_events_total',
    help: 'Cache lookups and failures, by record kind and outcome (hit, miss, stale, error, unreadable).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
    collect: () => this.#flushCacheEvents(),
  });

  /** Cache events not yet handed to {@link cacheEvents}, by kind and outcome. */
  readonly #cacheTally = new Map<string, Map<string, number>>();

  /** One cache event (every lookup has one): a number added to, no prom-client work. */
  cacheEvent(kind: string, outcome: string): void {
    const byOutcome = innerMap(this.#cacheTally, kind);
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
  }

  #flushCacheEvents(): void {
    for (const [kind, byOutcome] of this.#cacheTally) {
      for (const [outcome, count] of byOutcome) {
        if (count > 0) this.cacheEvents.inc({ kind, outcome }, count);
        byOutcome.set(outcome, 0);
      }
    }
  }

  /** {@link upstreamCalls}: the upstream histogram's count of each series. */
  async #copyUpstreamCounts(): Promise<void> {
    const { values } = await this.upstreamLatency.get();
    this.upstreamCalls.reset();
    for (const { metricName, labels, value } of values) {
      if (metricName === UPSTREAM_LATENCY_COUNT) {
        this.upstreamCalls.inc(
          labels as Record<'upstream' | 'outcome' | 'business', string>,
          value,
        );
      }
    }
  }

  readonly paymentConfirmations = new Counter({
    name: 'gateway_payment_confirmations_total',
    help: 'confirmPayment answers, by outcome: confirmed, the first problem (NOT_FOUND, NOT_SUCCESSFUL, AMOUNT_TOO_LOW, …), or refused (an error: the claims could not be made or trusted).',
    labelNames: ['outcome', 'business'] as const,
    registers: [this.registry],
  });

  /** Documents by outcome since the counter was last read (see {@link document}). */
  readonly #documentTally = new Map<string, number>();

  readonly documents: Counter<'outcome'> = new Counter({
    name: 'gateway_documents_total',
    help: 'Documents prepared for execution: cached (reused), prepared (parsed and validated), refused.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
    collect: (): void => {
      for (const [outcome, count] of this.#documentTally) {
        if (count > 0) this.documents.inc({ outcome }, count);
        this.#documentTally.set(outcome, 0);
      }
    },
  });

  /** A document prepared, reused or refused (every request has one): a number added to. */
  document(outcome: string): void {
    this.#documentTally.set(outcome, (this.#documentTally.get(outcome) ?? 0) + 1);
  }

  readonly unhandledRejections = new Counter({
    name: 'gateway_unhandled_rejections_total',
    help: 'Promise rejections nothing handled (logged, the process keeps serving); any is a bug.',
    registers: [this.registry],
  });

  /** Reads the connection slots held when /metrics is scraped (set by the server). */
  connectionSlots: () => number = () => 0;

  readonly connectionSlotsHeld: Gauge = new Gauge({
    name: 'gateway_connection_slots',
    help: 'WebSocket connections and graphql-sse reservations held, all callers together.',
    registers: [this.registry],
    collect: (): void => this.connectionSlotsHeld.set(this.connectionSlots()),
  });

  readonly streamsEnded = new Counter({
    name: 'gateway_streams_ended_total',
    help: 'Streams the gateway ended because their client did not read them, by transport (sse, multipart, websocket) and reason (overflow: STREAM_MAX_BUFFERED_BYTES waiting; stalled: nothing written for STREAM_WRITE_TIMEOUT_MS).',
    labelNames: ['transport', 'reason'] as const,
    registers: [this.registry],
  });

  readonly webhooks = new Counter({
    name: 'gateway_webhooks_total',
    help: 'Signed notifications received, by source (payment, kyc) and outcome (accepted, replay, unsigned, bad_signature, expired, bad_request, too_large).',
    labelNames: ['source', 'outcome', 'business'] as const,
    registers: [this.registry],
  });

  readonly webhookPushDelay = new Histogram({
    name: 'gateway_webhook_push_delay_seconds',
    help: 'Time from a notification arriving to the fresh record reaching a live subscriber (one sample per subscriber), by source.',
    labelNames: ['source', 'business'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  /** Reads the document cache's size when /metrics is scraped (set by the server). */
  documentCacheSize: () => number = () => 0;

  readonly documentCacheBytes: Gauge = new Gauge({
    name: 'gateway_document_cache_bytes',
    help: 'Estimated memory held by parsed and validated documents kept for reuse.',
    registers: [this.registry],
    collect: (): void => this.documentCacheBytes.set(this.documentCacheSize()),
  });

  constructor() {
    // Process metrics (RSS, heap, event-loop lag, GC) under the usual names, less the three
    // gauges named `_total` (a suffix for counters only: `promtool check metrics` refuses them);
    // their values are the sums of `nodejs_active_handles`, `_requests` and `_resources` by type.
    collectDefaultMetrics({ register: this.registry });
    for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
  }

  /** Observes how long a request took: a subscription's stream apart from the rest. */
  observeDuration(
    operationType: string | undefined,
    seconds: number,
    business: BusinessLabel = NO_BUSINESS,
  ): void {
    if (operationType === 'subscription') this.subscriptionDuration.observe(business, seconds);
    else
      this.#pendingDurations.add(this.#durationLabel(operationType ?? 'none', business), seconds);
  }

  /** The label object of a request's duration, made once per business and operation type. */
  #durationLabel(operationType: string, business: BusinessLabel): DurationLabel {
    const byType = innerMap(this.#durationLabels, business.business ?? '');
    let labels = byType.get(operationType);
    if (!labels) {
      labels = Object.freeze({ operation_type: operationType, ...business });
      byType.set(operationType, labels);
    }
    return labels;
  }

  /** A business's upstream circuits, both closed (its clients are new: built or replaced). */
  upstreamsClosed(business: BusinessLabel): void {
    for (const upstream of ['payment', 'kyc']) this.breakerState.set({ upstream, ...business }, 0);
  }

  /**
   * Removes every series of a business no longer served (a reload removed it), so that the
   * `business` label only ever holds the ids served now and the series do not pile up.
   */
  async forgetBusiness(business: string): Promise<void> {
    this.#durationLabels.delete(business);
    const labelled = [
      this.graphqlRequests,
      this.graphqlErrors,
      this.requestDuration,
      this.subscriptionDuration,
      this.upstreamCalls,
      this.upstreamLatency,
      this.upstreamRetries,
      this.upstreamRejected,
      this.breakerState,
      this.paymentConfirmations,
      this.webhooks,
      this.webhookPushDelay,
    ];
    for (const metric of labelled) {
      const { values } = await metric.get();
      for (const { labels } of values) {
        if (labels.business !== business) continue;
        // A histogram's bucket samples carry `le`; its series is named without it.
        const { le: _le, ...series } = labels as Record<string, string | number>;
        metric.remove(series as never);
      }
    }
  }

  /** Names of the project's own operations (its trusted documents): always their own label. */
  trustOperations(names: Iterable<string>): void {
    for (const name of names) if (OPERATION_NAME.test(name)) this.#trusted.add(name);
  }

  /**
   * A label value for an operation name, such that a few callers cannot take the label slots
   * from the operations that own them: the project's own operations always have their label;
   * another name gets one once `CALLERS_FOR_LABEL` distinct callers have sent it, while one of
   * `MAX_OPERATION_LABELS` slots is free, and gives it back after `LABEL_IDLE_MS` unused. Until
   * then (and for names that are not plain identifiers) it is `other`; no name: `anonymous`.
   */
  operationLabel(name: string | null | undefined, caller = ''): string {
    if (!name) return 'anonymous';
    if (!OPERATION_NAME.test(name)) return 'other';
    if (this.#trusted.has(name) || this.#labelled.get(name)) return name;
    let callers = this.#candidates.get(name);
    if (!callers) {
      callers = new Set();
      this.#candidates.set(name, callers);
    }
    callers.add(caller);
    if (callers.size < CALLERS_FOR_LABEL || this.#labelled.size >= MAX_OPERATION_LABELS) {
      return 'other';
    }
    this.#candidates.delete(name);
    this.#labelled.set(name, true);
    return name;
  }

  /** Removes the series of an operation label given back. */
  async #forget(operation: string): Promise<void> {
    for (const metric of [this.graphqlRequests, this.graphqlErrors]) {
      const { values } = await metric.get();
      for (const { labels } of values) {
        if (labels.operation === operation) (metric as Counter<string>).remove(labels as never);
      }
    }
  }
}
