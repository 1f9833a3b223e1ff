/**
 * OpenTelemetry tracing: a SERVER span per GraphQL request (continuing an incoming W3C
 * `traceparent`), a CLIENT span per upstream HTTP call (which carries `traceparent` onward), cache
 * outcomes and retries as events, exported over OTLP/HTTP (protobuf or JSON) by the maintained
 * SDK. Off unless an OTLP endpoint is set: then no provider exists and nothing is recorded.
 *
 * The provider belongs to one gateway (no global tracer provider), so tests may run several; only
 * the context manager (AsyncLocalStorage, which carries the active span across awaits) is global.
 * Span names and attributes hold no credential and no personal data: never a URL (the KYC path
 * carries the userRef), a document's values, variables, tokens, names, e-mails or phones.
 */
import {
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export interface TracingConfig {
  /** Where spans go: the full OTLP/HTTP traces URL (…/v1/traces). */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
}

export interface Tracing {
  tracer: Tracer;
  /** The request's context from its W3C trace headers (the root context when there are none). */
  extract(headers: Record<string, string | string[] | undefined>): Context;
  /** Adds `traceparent` (and `tracestate`) of `span` to outgoing headers. */
  inject(span: Span, headers: Record<string, string>): void;
  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

const getter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};
const setter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

let contextManager: AsyncLocalStorageContextManager | undefined;

/** Builds the gateway's tracing, or undefined when no endpoint is configured. */
export function createTracing(config: TracingConfig | undefined): Tracing | undefined {
  if (!config) return undefined;
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter =
    config.protocol === 'http/json'
      ? new JsonExporter({ url: config.url })
      : new ProtobufExporter({ url: config.url });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const propagator = new W3CTraceContextPropagator();
  return {
    tracer: provider.getTracer('payment-kyc-gateway'),
    extract: (headers) => propagator.extract(context.active(), headers, getter),
    inject: (span, headers) =>
      propagator.inject(trace.setSpan(context.active(), span), headers, setter),
    shutdown: () => provider.shutdown(),
  };
}

/** What an upstream call gets when tracing is off: one shared no-op. */
const UNTRACED: { span: undefined; done: (status: number | undefined) => void } = {
  span: undefined,
  done: () => {},
};

/** A CLIENT span for one upstream call, its status set and ended by `done`. */
export function upstreamSpan(
  tracing: Tracing | undefined,
  upstream: string,
  attempt: number,
): { span: Span | undefined; done: (status: number | undefined) => void } {
  if (!tracing) return UNTRACED;
  const span = tracing.tracer.startSpan(`${upstream} GET`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gateway.upstream': upstream,
      'http.request.method': 'GET',
      'gateway.upstream.attempt': attempt,
    },
  });
  return {
    span,
    done: (status) => {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (status === undefined || status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
