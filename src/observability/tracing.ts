/**
 * OpenTelemetry tracing, configured by the SDK itself from the standard `OTEL_*` variables
 * (`@opentelemetry/sdk-node`'s `startNodeSdk`): `OTEL_SDK_DISABLED`, `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER(_ARG)`, `OTEL_PROPAGATORS`,
 * `OTEL_TRACES_EXPORTER`, the `OTEL_EXPORTER_OTLP_*` endpoint, protocol, headers and timeouts,
 * `OTEL_BSP_*`, the span limits and `OTEL_CONFIG_FILE` mean what the specification says. The
 * gateway reads only what the SDK does not decide: whether to start it at all (an endpoint, an
 * exporter or a configuration file is named), and its own default `service.name`.
 *
 * The spans follow the semantic conventions: a SERVER span per HTTP request to /graphql
 * (`POST /graphql`), an INTERNAL span per GraphQL operation (`query OperationName`), a CLIENT
 * span per upstream HTTP call (`GET`), which carries the trace onward in the propagators'
 * headers; a request that ends in an error has status ERROR. No span holds a credential or
 * personal data: no query string value, document, variables, token, name, e-mail or phone.
 */
import type { IncomingMessage } from 'node:http';
import {
  type Attributes,
  type Context,
  context,
  ProxyTracerProvider,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import {
  type ExecutionArgs,
  type ExecutionResult,
  getOperationAST,
  type OperationTypeNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RequestSummary } from './plugin.ts';

export interface Tracing {
  tracer: Tracer;
  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * The standard variables that start the SDK: without one of them nothing is exported (the SDK's
 * own default would send to localhost:4318), and no span is made.
 */
const STARTERS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_TRACES_EXPORTER',
  'OTEL_CONFIG_FILE',
] as const;

/** Whether the environment asks for traces (see STARTERS). */
export function tracingRequested(env: Record<string, string | undefined>): boolean {
  return STARTERS.some((name) => (env[name] ?? '').trim() !== '');
}

/** The SDK's tracer provider, when it registered one (not disabled, an exporter configured). */
function registeredProvider(): boolean {
  const global = trace.getTracerProvider();
  const delegate = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
  return delegate instanceof TracerProvider;
}

/**
 * Starts the OpenTelemetry SDK for this process from its environment, when it asks for traces;
 * undefined when tracing is off (not asked for, `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`,
 * or a configuration the SDK refused). The SDK registers itself globally (tracer provider,
 * propagators, the AsyncLocalStorage context manager): one per process, started before the gateway.
 * It is loaded only then, so a gateway without tracing loads none of it.
 */
export async function startTracing(
  env: Record<string, string | undefined>,
  version: string,
): Promise<Tracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  const { startNodeSdk } = await import('@opentelemetry/sdk-node');
  const sdk = startNodeSdk({
    // The lowest-priority attributes: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override them.
    baseResource: defaultResource().merge(
      resourceFromAttributes({ 'service.name': 'payment-kyc-gateway', 'service.version': version }),
    ),
    // Traces only: metrics are Prometheus's (/metrics), logs are the JSON lines on stdout.
    metricReaders: [],
    logRecordProcessors: [],
  });
  if (!registeredProvider()) {
    await sdk.shutdown();
    return undefined;
  }
  return { tracer: trace.getTracer('payment-kyc-gateway', version), shutdown: sdk.shutdown };
}

const getter: TextMapGetter<IncomingMessage['headers']> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

const KNOWN_METHODS = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
  'QUERY',
]);

/** `server.address` and `server.port` of a Host header (`name`, `name:port`, `[v6]:port`). */
function hostAttributes(host: string | undefined): Attributes {
  if (!host) return {};
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(host);
  if (!match?.[1]) return {};
  return {
    'server.address': match[1].replace(/^\[|\]$/g, ''),
    ...(match[2] && { 'server.port': Number(match[2]) }),
  };
}

/**
 * Runs `serve` inside a SERVER span for one request to /graphql, continuing the caller's trace
 * (the propagators' headers, W3C `traceparent` by default). The span is ended by `endRequestSpan`.
 */
export function traceRequest(
  tracing: Tracing,
  req: IncomingMessage,
  serve: (span: Span) => void,
): void {
  const parent = propagation.extract(context.active(), req.headers, getter);
  const method = req.method ?? 'GET';
  const known = KNOWN_METHODS.has(method);
  const span = tracing.tracer.startSpan(
    known ? `${method} /graphql` : 'HTTP /graphql',
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': known ? method : '_OTHER',
        ...(!known && { 'http.request.method_original': method.slice(0, 32) }),
        'http.route': '/graphql',
        // The path only: a GET's query string holds the document and its variables.
        'url.path': '/graphql',
        'url.scheme': 'http',
        'network.protocol.version': req.httpVersion,
        ...hostAttributes(req.headers.host),
      },
    },
    parent,
  );
  context.with(trace.setSpan(parent, span), () => serve(span));
}

/** Completes a request's SERVER span when its answer has gone out. */
export function endRequestSpan(span: Span, summary: RequestSummary, status: number): void {
  span.setAttributes({
    'http.response.status_code': status,
    ...(summary.operationType && { 'graphql.operation.type': summary.operationType }),
    ...(summary.operation && { 'graphql.operation.name': summary.operation }),
    'gateway.request_id': summary.id,
    'gateway.error_codes': summary.codes,
  });
  // Any error the caller receives (UPSTREAM_UNAVAILABLE in a 200 answer too) fails the request.
  if (summary.codes.length > 0 || status >= 500) {
    span.setAttribute('error.type', summary.codes[0] ?? String(status));
    span.setStatus({ code: SpanStatusCode.ERROR, message: summary.codes.join(', ') });
  }
  span.end();
}

/** The semantic conventions' GraphQL span name: `query Name`, `query`, or `GraphQL Operation`. */
function operationSpanName(type: OperationTypeNode | undefined, name: string | undefined): string {
  if (!type) return 'GraphQL Operation';
  return name ? `${type} ${name}` : type;
}

function hasErrors(result: unknown): boolean {
  return (
    typeof result === 'object' &&
    result !== null &&
    Array.isArray((result as ExecutionResult).errors) &&
    ((result as ExecutionResult).errors?.length ?? 0) > 0
  );
}

/** What names an operation in the arguments of execute and subscribe. */
type OperationArgs = Pick<ExecutionArgs, 'document' | 'operationName'>;

/**
 * The Yoga plugin of the INTERNAL span per GraphQL operation, active while it executes (its
 * upstream calls are its children). Placed after the pipeline's operation plugin, which
 * replaces the execute function, so that it wraps that one.
 */
export function useOperationSpans(tracing: Tracing): Plugin {
  const open = (args: OperationArgs): { span: Span; ctx: Context } => {
    const operation = getOperationAST(args.document, args.operationName);
    const type = operation?.operation;
    const name = operation?.name?.value;
    const span = tracing.tracer.startSpan(operationSpanName(type, name), {
      kind: SpanKind.INTERNAL,
      attributes: {
        ...(type && { 'graphql.operation.type': type }),
        ...(name && { 'graphql.operation.name': name }),
      },
    });
    return { span, ctx: trace.setSpan(context.active(), span) };
  };
  const close = (span: Span, result: unknown, error?: unknown): void => {
    if (error !== undefined || hasErrors(result)) {
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  /** Runs `inside` in the span's context and ends the span when its (awaited) result is there. */
  const around = <A extends OperationArgs, R>(args: A, inside: (args: A) => R): R => {
    const { span, ctx } = open(args);
    let result: R;
    try {
      result = context.with(ctx, () => inside(args));
    } catch (error) {
      close(span, undefined, error);
      throw error;
    }
    if (result instanceof Promise) {
      result.then(
        (value: unknown) => close(span, value),
        (error: unknown) => close(span, undefined, error ?? 'rejected'),
      );
    } else close(span, result);
    return result;
  };
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn((args) => around(args, executeFn));
    },
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn((args) => around(args, subscribeFn));
    },
  };
}

/** What an upstream call gets when tracing is off: one shared no-op. */
const UNTRACED: UpstreamSpan = {
  span: undefined,
  done: () => {},
};

/** Where an upstream is: what its CLIENT spans say of it. */
export interface UpstreamTarget {
  /** `payment` or `kyc`. */
  upstream: string;
  /** The base address's origin (scheme, host, port), without credentials. */
  origin: string;
  host: string;
  port: number;
}

/** The target of a base address (credentials in it are dropped). */
export function upstreamTarget(upstream: string, baseUrl: string): UpstreamTarget {
  const url = new URL(baseUrl);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { upstream, origin: url.origin, host: url.hostname.replace(/^\[|\]$/g, ''), port };
}

/**
 * `path` with each query value replaced by `REDACTED` (the KYC query names the user): the
 * conventions' `url.full` without personal data.
 */
function redactQuery(path: string): string {
  const at = path.indexOf('?');
  if (at < 0) return path;
  const names = path
    .slice(at + 1)
    .split('&')
    .map((pair) => `${pair.split('=', 1)[0]}=REDACTED`);
  return `${path.slice(0, at)}?${names.join('&')}`;
}

/** One upstream call's span (none when tracing is off) and how to end it. */
export interface UpstreamSpan {
  span: Span | undefined;
  done: (status: number | undefined, error?: string) => void;
}

/**
 * A CLIENT span for one upstream call (`GET`), made the active span's child; `done` sets the
 * answer's status (or the failure) and ends it. `attempt` 1 is the first call; later ones are
 * resends (`http.request.resend_count`).
 */
export function upstreamSpan(
  tracing: Tracing | undefined,
  target: UpstreamTarget,
  path: string,
  attempt: number,
): UpstreamSpan {
  if (!tracing) return UNTRACED;
  const span = tracing.tracer.startSpan('GET', {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': 'GET',
      'server.address': target.host,
      'server.port': target.port,
      'url.full': target.origin + redactQuery(path),
      'gateway.upstream': target.upstream,
      ...(attempt > 1 && { 'http.request.resend_count': attempt - 1 }),
    },
  });
  return {
    span,
    done: (status, error) => {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (status === undefined || status >= 400) {
        span.setAttribute(
          'error.type',
          status === undefined ? (error ?? '_OTHER') : String(status),
        );
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/** Adds the propagators' headers (W3C `traceparent` by default) of `span` to outgoing headers. */
export function injectTrace(span: Span, headers: Record<string, string>): void {
  propagation.inject(trace.setSpan(context.active(), span), headers);
}
