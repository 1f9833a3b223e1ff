/**
 * Prometheus metrics (prom-client), one registry per gateway (no global state, so tests can run
 * several gateways). Labels hold only bounded, non-personal values: upstream names, outcomes,
 * error codes, cache kinds, and operation names that pass a strict pattern (others are `other`).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

const OPERATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Most distinct operation names kept as label values; later ones are `other`. */
const MAX_OPERATION_LABELS = 200;

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #operations = new Set<string>();

  readonly graphqlRequests = new Counter({
    name: 'gateway_graphql_requests_total',
    help: 'GraphQL requests, by operation name and outcome (ok or error).',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly graphqlErrors = new Counter({
    name: 'gateway_graphql_errors_total',
    help: 'GraphQL errors returned, by operation name and extensions.code.',
    labelNames: ['operation', 'code'] as const,
    registers: [this.registry],
  });

  readonly requestDuration = new Histogram({
    name: 'gateway_graphql_request_duration_seconds',
    help: 'Time to answer a GraphQL request.',
    labelNames: ['operation'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly requestsInFlight = new Gauge({
    name: 'gateway_graphql_requests_in_flight',
    help: 'GraphQL requests received and not answered yet (streams included).',
    registers: [this.registry],
  });

  readonly jsonTransport = new Counter({
    name: 'gateway_json_transport_total',
    help: "JSON POSTs answered by the JSON transport, or left to Yoga's handler (declined).",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly upstreamCalls = new Counter({
    name: 'gateway_upstream_requests_total',
    help: 'HTTP calls to an upstream, by upstream and outcome.',
    labelNames: ['upstream', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly upstreamLatency = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Duration of one HTTP call to an upstream.',
    labelNames: ['upstream', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly upstreamRetries = new Counter({
    name: 'gateway_upstream_retries_total',
    help: 'Retries of upstream reads.',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly upstreamRejected = new Counter({
    name: 'gateway_upstream_rejected_total',
    help: 'Upstream reads refused without a call, by reason (circuit_open, concurrency).',
    labelNames: ['upstream', 'reason'] as const,
    registers: [this.registry],
  });

  readonly breakerState = new Gauge({
    name: 'gateway_upstream_circuit_state',
    help: 'Circuit breaker state per upstream: 0 closed, 1 open, 2 half-open.',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });

  readonly cacheEvents = new Counter({
    name: 'gateway_cache_events_total',
    help: 'Cache lookups and failures, by record kind and outcome (hit, miss, stale, error).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly documents = new Counter({
    name: 'gateway_documents_total',
    help: 'Documents prepared for execution: cached (reused), prepared (parsed and validated), refused.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhooks = new Counter({
    name: 'gateway_webhooks_total',
    help: 'Signed notifications received, by source (payment, kyc) and outcome (accepted, replay, unsigned, bad_signature, expired, bad_request, too_large).',
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookPushDelay = new Histogram({
    name: 'gateway_webhook_push_delay_seconds',
    help: 'Time from a notification arriving to the fresh record reaching a live subscriber (one sample per subscriber), by source.',
    labelNames: ['source'] as const,
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
    // Process metrics (RSS, heap, event-loop lag, GC) under the usual names.
    collectDefaultMetrics({ register: this.registry });
    for (const upstream of ['payment', 'kyc']) this.breakerState.set({ upstream }, 0);
  }

  /** A label value for an operation name: the name when safe and known, else a bucket. */
  operationLabel(name: string | null | undefined): string {
    if (!name) return 'anonymous';
    if (!OPERATION_NAME.test(name)) return 'other';
    if (this.#operations.has(name)) return name;
    if (this.#operations.size >= MAX_OPERATION_LABELS) return 'other';
    this.#operations.add(name);
    return name;
  }
}
