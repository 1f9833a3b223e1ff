/**
 * One operation over each transport of `/graphql`, spoken on the wire (fetch and `ws`, no
 * client library in between), so that a test sees exactly what a client receives: the HTTP
 * status or WebSocket close code, every frame, the error codes, and when the first result came.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';

export const TRANSPORTS = [
  'POST',
  'GET',
  'SSE distinct',
  'SSE single',
  'multipart',
  'WebSocket',
] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** Whether the transport answers over HTTP with a status of its own. */
export const HAS_STATUS: Record<Transport, boolean> = {
  POST: true,
  GET: true,
  'SSE distinct': true,
  'SSE single': true,
  multipart: true,
  WebSocket: false,
};

export interface Operation {
  query?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  extensions?: Record<string, unknown>;
}

export interface WireResult {
  /** The HTTP status of the answer carrying the operation (the POST in SSE single mode). */
  status?: number;
  /** The WebSocket's close code, when the server closed it. */
  close?: number;
  /** Every result received (JSON bodies, events, parts, messages), in order. */
  results: Array<Record<string, unknown>>;
  /** `extensions.code` of every error received. */
  codes: string[];
  /** Milliseconds from sending the operation to the first result. */
  firstResultMs?: number;
  /** Everything received as text (for checks on what must never appear). */
  raw: string;
}

interface Options {
  token: string | null;
  /** Stop after this many results (a stream that goes on). */
  maxResults?: number;
  timeoutMs?: number;
  /** Called as each result arrives, before the stream goes on. */
  onResult?: (result: Record<string, unknown>) => void;
}

function codesOf(results: Array<Record<string, unknown>>): string[] {
  const codes: string[] = [];
  for (const result of results) {
    const errors = (result.errors ?? []) as Array<{ extensions?: { code?: string } }>;
    for (const error of errors) codes.push(error.extensions?.code ?? '(none)');
  }
  return codes;
}

function authorization(token: string | null): Record<string, string> {
  return token === null ? {} : { authorization: `Bearer ${token}` };
}

/** Reads `response`'s body chunk by chunk, `onText` deciding when enough was read. */
async function readChunks(
  response: Response,
  signal: AbortSignal,
  onText: (text: string) => boolean,
): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) return;
  const decoder = new TextDecoder();
  const abort = () => void reader.cancel().catch(() => {});
  signal.addEventListener('abort', abort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (onText(decoder.decode(value, { stream: true }))) {
        await reader.cancel().catch(() => {});
        return;
      }
    }
  } catch {
    // Cancelled at the deadline.
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/** `event: …\ndata: …` blocks of an event stream. */
function sseEvents(text: string): Array<{ event: string; data: string }> {
  return text
    .split('\n\n')
    .filter((block) => block.includes('event:'))
    .map((block) => ({
      event: /event: (.*)/.exec(block)?.[1] ?? '',
      data: /data: ?(.*)/.exec(block)?.[1] ?? '',
    }));
}

/** The results of an event stream so far (`next` events' data, unwrapped), and whether it ended. */
function eventResults(
  text: string,
  unwrap: (data: unknown) => Record<string, unknown>,
): { results: Array<Record<string, unknown>>; ended: boolean } {
  const events = sseEvents(text);
  return {
    results: events.filter((e) => e.event === 'next').map((e) => unwrap(JSON.parse(e.data))),
    ended: events.some((e) => e.event === 'complete'),
  };
}

async function jsonBody(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  try {
    return [JSON.parse(text) as Record<string, unknown>];
  } catch {
    return [{ text }];
  }
}

/** A stream being read by `runOver`: `first` resolves once its first result arrived. */
export interface Watched {
  first: Promise<void>;
  done: Promise<WireResult>;
}

/**
 * Runs `operation` over `transport` like `runOver`, and tells when the first result arrived: a
 * test that moves a clock or changes a record after a stream's first read waits for it.
 */
export function watchOver(
  transport: Transport,
  url: string,
  operation: Operation,
  options: Omit<Options, 'onResult'>,
): Watched {
  let sawFirst: () => void = () => {};
  const first = new Promise<void>((resolve) => {
    sawFirst = resolve;
  });
  const done = runOver(transport, url, operation, { ...options, onResult: () => sawFirst() });
  // A stream that ends without a result still releases whoever waits for the first.
  void done.finally(() => sawFirst());
  return { first, done };
}

/** Runs `operation` over `transport` against the gateway at `url`. */
export async function runOver(
  transport: Transport,
  url: string,
  operation: Operation,
  options: Options,
): Promise<WireResult> {
  const deadline = AbortSignal.timeout(options.timeoutMs ?? 5000);
  const maxResults = options.maxResults ?? Number.POSITIVE_INFINITY;
  const endpoint = `${url}/graphql`;
  const started = performance.now();
  const out: WireResult = { results: [], codes: [], raw: '' };
  const got = (result: Record<string, unknown>) => {
    out.firstResultMs ??= performance.now() - started;
    out.results.push(result);
    options.onResult?.(result);
  };
  const finish = (): WireResult => ({ ...out, codes: codesOf(out.results) });
  const readJson = async (response: Response) => {
    for (const result of await jsonBody(response)) got(result);
    out.raw = JSON.stringify(out.results);
  };
  /** Reads a streamed answer; `parse` gives its results so far and whether it said it ended. */
  const readStream = (
    response: Response,
    signal: AbortSignal,
    parse: (text: string) => { results: Array<Record<string, unknown>>; ended: boolean },
  ) => {
    let text = '';
    return readChunks(response, signal, (chunk) => {
      text += chunk;
      out.raw = text;
      const { results, ended } = parse(text);
      while (out.results.length < results.length) got(results[out.results.length] ?? {});
      return ended || out.results.length >= maxResults;
    });
  };

  if (transport === 'POST' || transport === 'GET') {
    const headers = {
      accept: 'application/graphql-response+json',
      ...authorization(options.token),
    };
    let response: Response;
    if (transport === 'POST') {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(operation),
        signal: deadline,
      });
    } else {
      const search = new URLSearchParams();
      if (operation.query !== undefined) search.set('query', operation.query);
      if (operation.variables) search.set('variables', JSON.stringify(operation.variables));
      if (operation.operationName) search.set('operationName', operation.operationName);
      if (operation.extensions) search.set('extensions', JSON.stringify(operation.extensions));
      response = await fetch(`${endpoint}?${search}`, { headers, signal: deadline });
    }
    out.status = response.status;
    await readJson(response);
    return finish();
  }

  if (transport === 'SSE distinct') {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        accept: 'text/event-stream',
        'content-type': 'application/json',
        ...authorization(options.token),
      },
      body: JSON.stringify(operation),
      signal: deadline,
    });
    out.status = response.status;
    if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      await readJson(response);
      return finish();
    }
    await readStream(response, deadline, (text) =>
      eventResults(text, (data) => data as Record<string, unknown>),
    );
    return finish();
  }

  if (transport === 'SSE single') {
    const reserve = await fetch(endpoint, {
      method: 'PUT',
      headers: authorization(options.token),
      signal: deadline,
    });
    if (reserve.status !== 201) {
      out.status = reserve.status;
      await readJson(reserve);
      return finish();
    }
    const streamToken = await reserve.text();
    const withToken = {
      ...authorization(options.token),
      'x-graphql-event-stream-token': streamToken,
    };
    const stream = await fetch(endpoint, {
      headers: { ...withToken, accept: 'text/event-stream' },
      signal: deadline,
    });
    const id = 'op-1';
    const sent = await fetch(endpoint, {
      method: 'POST',
      headers: { ...withToken, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        ...operation,
        extensions: { ...operation.extensions, operationId: id },
      }),
      signal: deadline,
    });
    out.status = sent.status;
    if (sent.status !== 202) {
      await readJson(sent);
      await stream.body?.cancel().catch(() => {});
      return finish();
    }
    await readStream(stream, deadline, (text) =>
      eventResults(text, (data) => (data as { payload: Record<string, unknown> }).payload),
    );
    return finish();
  }

  if (transport === 'multipart') {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        // As Apollo Client asks (its subscriptions and, with deferSpec, its queries).
        accept:
          'multipart/mixed;boundary="graphql";subscriptionSpec=1.0, application/graphql-response+json, application/json',
        'content-type': 'application/json',
        ...authorization(options.token),
      },
      body: JSON.stringify(operation),
      signal: deadline,
    });
    out.status = response.status;
    if (!(response.headers.get('content-type') ?? '').startsWith('multipart/mixed')) {
      await readJson(response);
      return finish();
    }
    await readStream(response, deadline, (text) => ({
      results: text
        .split('\r\n--graphql')
        // A part counts once the delimiter that ends it has come, as clients read them.
        .slice(0, -1)
        .map((part) => part.split('\r\n\r\n')[1])
        .filter((body): body is string => body?.startsWith('{') === true)
        .map((body) => JSON.parse(body) as { payload?: Record<string, unknown> })
        .flatMap((part) => (part.payload === undefined ? [] : [part.payload])),
      ended: text.includes('--graphql--'),
    }));
    return finish();
  }

  // WebSocket, graphql-transport-ws.
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, options.timeoutMs ?? 5000);
    socket.on('open', () => {
      socket.send(
        JSON.stringify({
          type: 'connection_init',
          payload: options.token === null ? {} : { authorization: `Bearer ${options.token}` },
        }),
      );
    });
    socket.on('message', (data) => {
      const text = String(data);
      out.raw += text;
      const message = JSON.parse(text) as { type: string; payload?: unknown };
      if (message.type === 'connection_ack') {
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: operation }));
      } else if (message.type === 'next') {
        got(message.payload as Record<string, unknown>);
        if (out.results.length >= maxResults) {
          socket.close(1000);
          done();
        }
      } else if (message.type === 'error') {
        got({ errors: message.payload });
        socket.close(1000);
        done();
      } else if (message.type === 'complete') {
        socket.close(1000);
        done();
      }
    });
    socket.on('close', (code) => {
      if (code !== 1000 && code !== 1005) out.close = code;
      done();
    });
    socket.on('error', done);
  });
  if (socket.readyState === WebSocket.OPEN) socket.close(1000);
  return finish();
}

/**
 * Sends a raw HTTP request to `url` and reads only its head, then stops reading for good (the
 * socket is paused: the kernel's buffers fill and the gateway's writes stop draining).
 */
export function stalledAnswer(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ socket: Socket; head: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    const lines = Object.entries({
      host: '127.0.0.1',
      ...headers,
      ...(body !== '' && { 'content-length': String(Buffer.byteLength(body)) }),
    }).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n${body}`);
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      const end = seen.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      socket.pause();
      resolve({ socket, head: seen.slice(0, end) });
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before an answer: ${seen}`)));
  });
}
