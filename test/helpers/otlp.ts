/**
 * An OTLP/HTTP traces receiver on 127.0.0.1, as a collector would be: it accepts
 * `POST /v1/traces` in `http/json` and `http/protobuf` and decodes both into one shape (the
 * protobuf wire format read field by field, after opentelemetry-proto's trace.proto), keeping
 * the headers each export came with.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The resource's attributes of the batch the span came in. */
  resource: Record<string, unknown>;
}

export interface ReceivedExport {
  contentType: string;
  headers: IncomingHttpHeaders;
  spans: ReceivedSpan[];
}

export interface OtlpReceiver {
  /** The base address (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
  url: string;
  exports: ReceivedExport[];
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

// ---- protobuf wire format -------------------------------------------------------------------

type Field = { number: number; wire: number; value: bigint | Buffer };

function* fields(buffer: Buffer): Generator<Field> {
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buffer[at++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < buffer.length) {
    const key = Number(varint());
    const number = key >> 3;
    const wire = key & 7;
    if (wire === 0) yield { number, wire, value: varint() };
    else if (wire === 1) {
      yield { number, wire, value: buffer.readBigUInt64LE(at) };
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      yield { number, wire, value: buffer.subarray(at, at + length) };
      at += length;
    } else if (wire === 5) {
      yield { number, wire, value: BigInt(buffer.readUInt32LE(at)) };
      at += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
}

const bytes = (field: Field): Buffer => field.value as Buffer;

/** AnyValue: string 1, bool 2, int 3, double 4, array 5. */
function anyValue(buffer: Buffer): unknown {
  for (const field of fields(buffer)) {
    if (field.number === 1) return bytes(field).toString('utf8');
    if (field.number === 2) return field.value === 1n;
    if (field.number === 3) return Number(BigInt.asIntN(64, field.value as bigint));
    if (field.number === 4) return Buffer.from(bytes(field)).readDoubleLE(0);
    if (field.number === 5) {
      const values: unknown[] = [];
      for (const item of fields(bytes(field)))
        if (item.number === 1) values.push(anyValue(bytes(item)));
      return values;
    }
  }
  return undefined;
}

/** KeyValue: key 1, value 2. */
function keyValue(buffer: Buffer, into: Record<string, unknown>): void {
  let key = '';
  let value: unknown;
  for (const field of fields(buffer)) {
    if (field.number === 1) key = bytes(field).toString('utf8');
    if (field.number === 2) value = anyValue(bytes(field));
  }
  into[key] = value;
}

function protobufSpans(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  // ExportTraceServiceRequest.resource_spans 1 → ResourceSpans { resource 1, scope_spans 2 }.
  for (const resourceSpans of fields(body)) {
    if (resourceSpans.number !== 1) continue;
    const resource: Record<string, unknown> = {};
    const scopes: Buffer[] = [];
    for (const field of fields(bytes(resourceSpans))) {
      if (field.number === 1) {
        for (const attribute of fields(bytes(field))) {
          if (attribute.number === 1) keyValue(bytes(attribute), resource);
        }
      }
      if (field.number === 2) scopes.push(bytes(field));
    }
    // ScopeSpans { spans 2 } → Span { trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6,
    // attributes 9, status 15 { code 3 } }.
    for (const scope of scopes) {
      for (const spanField of fields(scope)) {
        if (spanField.number !== 2) continue;
        const span: ReceivedSpan = {
          traceId: '',
          spanId: '',
          parentSpanId: '',
          name: '',
          kind: 0,
          attributes: {},
          statusCode: 0,
          resource,
        };
        for (const field of fields(bytes(spanField))) {
          if (field.number === 1) span.traceId = bytes(field).toString('hex');
          if (field.number === 2) span.spanId = bytes(field).toString('hex');
          if (field.number === 4) span.parentSpanId = bytes(field).toString('hex');
          if (field.number === 5) span.name = bytes(field).toString('utf8');
          if (field.number === 6) span.kind = Number(field.value);
          if (field.number === 9) keyValue(bytes(field), span.attributes);
          if (field.number === 15) {
            for (const status of fields(bytes(field))) {
              if (status.number === 3) span.statusCode = Number(status.value);
            }
          }
        }
        spans.push(span);
      }
    }
  }
  return spans;
}

// ---- JSON -----------------------------------------------------------------------------------

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
type JsonAttributes = Array<{ key: string; value: JsonAnyValue }> | undefined;

function jsonValue(value: JsonAnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

function jsonAttributes(attributes: JsonAttributes): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, jsonValue(value)]));
}

function jsonSpans(body: Buffer): ReceivedSpan[] {
  const parsed = JSON.parse(body.toString('utf8')) as {
    resourceSpans: Array<{
      resource?: { attributes?: JsonAttributes };
      scopeSpans: Array<{
        spans: Array<{
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          attributes?: JsonAttributes;
          status?: { code?: number };
        }>;
      }>;
    }>;
  };
  return parsed.resourceSpans.flatMap((resourceSpans) => {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    return resourceSpans.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
        statusCode: span.status?.code ?? 0,
        resource,
      })),
    );
  });
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const contentType = req.headers['content-type'] ?? '';
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const json = contentType.startsWith('application/json');
      exports.push({
        contentType,
        headers: req.headers,
        spans: json ? jsonSpans(body) : protobufSpans(body),
      });
      // An empty ExportTraceServiceResponse, in the request's encoding.
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans: () => exports.flatMap((item) => item.spans),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
