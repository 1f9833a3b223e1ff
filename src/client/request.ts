/**
 * A small typed client of the gateway that runs wherever `fetch` does (browsers, Node, React
 * Native): queries and mutations over GraphQL over HTTP, subscriptions over Server-Sent Events.
 * The /kyc page uses it; other teams may too, or use any GraphQL client with the typed
 * documents of ./generated.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type DocumentNode, type GraphQLFormattedError, print } from 'graphql';

/** One GraphQL response, with the HTTP status it came with. */
export interface GatewayResult<TData> {
  /** HTTP status: 200 for a executed operation, 401 for a missing or bad token, … */
  status: number;
  data?: TData | null;
  errors?: readonly GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
}

/** Settings of {@link createGatewayClient}. */
export interface GatewayClientOptions {
  /** Address of the GraphQL endpoint, e.g. `https://gateway.example.com/graphql` (or `/graphql` in a page). */
  url: string;
  /** The bearer token, or a function that returns the current one (asked before each request). */
  token?: string | (() => string | undefined);
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/** Per-call settings. */
export interface RequestOptions {
  signal?: AbortSignal;
}

/** What {@link createGatewayClient} returns. */
export interface GatewayClient {
  /** Runs a query or mutation. Rejects only when no GraphQL response came (network, not JSON). */
  request<TData, TVariables>(
    document: TypedDocumentNode<TData, TVariables>,
    variables: TVariables,
    options?: RequestOptions,
  ): Promise<GatewayResult<TData>>;
  /**
   * Runs a subscription over Server-Sent Events and yields each result until the server
   * completes the stream. Leaving the loop (or aborting the signal) closes the connection.
   */
  subscribe<TData, TVariables>(
    document: TypedDocumentNode<TData, TVariables>,
    variables: TVariables,
    options?: RequestOptions,
  ): AsyncGenerator<GatewayResult<TData>, void, undefined>;
}

/** The gateway answered something that is not a GraphQL response. */
export class GatewayHttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'GatewayHttpError';
    this.status = status;
  }
}

const printed = new WeakMap<DocumentNode, string>();

function source(document: DocumentNode): string {
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  return text;
}

async function readJson<TData>(response: Response): Promise<GatewayResult<TData>> {
  const type = response.headers.get('content-type') ?? '';
  if (!/json/i.test(type)) {
    await response.body?.cancel();
    throw new GatewayHttpError(
      response.status,
      `The gateway answered HTTP ${response.status} without a GraphQL response.`,
    );
  }
  const body = (await response.json()) as Omit<GatewayResult<TData>, 'status'>;
  return { ...body, status: response.status };
}

/** Splits one SSE block into its event name and data (data lines joined by newlines). */
function parseEvent(block: string): { event: string; data: string } {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return { event, data: data.join('\n') };
}

/** Creates a client of one gateway. */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));

  const headers = (accept: string): Record<string, string> => {
    const token = typeof options.token === 'function' ? options.token() : options.token;
    return {
      'content-type': 'application/json',
      accept,
      ...(token !== undefined && token !== '' && { authorization: `Bearer ${token}` }),
    };
  };

  return {
    async request(document, variables, callOptions = {}) {
      const response = await doFetch(options.url, {
        method: 'POST',
        headers: headers('application/graphql-response+json, application/json'),
        body: JSON.stringify({ query: source(document), variables }),
        ...(callOptions.signal && { signal: callOptions.signal }),
      });
      return readJson(response);
    },

    async *subscribe(document, variables, callOptions = {}) {
      const controller = new AbortController();
      const abort = (): void => controller.abort();
      callOptions.signal?.addEventListener('abort', abort);
      if (callOptions.signal?.aborted) controller.abort();
      try {
        const response = await doFetch(options.url, {
          method: 'POST',
          headers: headers('text/event-stream'),
          body: JSON.stringify({ query: source(document), variables }),
          signal: controller.signal,
        });
        // Errors before execution (a bad token, a bad document) come as one JSON response.
        if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
          yield await readJson(response);
          return;
        }
        if (response.body === null) return;
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += value;
          // Whole buffer each time, so a CRLF split across two chunks is still joined.
          buffer = buffer.replace(/\r\n/g, '\n');
          for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
            const { event, data } = parseEvent(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            if (event === 'complete') return;
            if ((event === 'next' || event === 'message') && data !== '') {
              const result = JSON.parse(data) as Omit<GatewayResult<never>, 'status'>;
              yield { ...result, status: response.status };
            }
          }
        }
      } finally {
        callOptions.signal?.removeEventListener('abort', abort);
        controller.abort();
      }
    },
  };
}
