/**
 * GraphQL over HTTP's requests (GET, or POST with a JSON body): reads one operation, runs it
 * through the operation entry and hands the outcome to the framing `Accept` asks for — JSON
 * (json.ts), an event stream (sse.ts, graphql-sse's distinct connections) or `multipart/mixed`
 * (multipart.ts), the first streaming type listed winning when a stream comes back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLError } from 'graphql';
import { requestError } from '../errors.ts';
import { acceptRanges, negotiate } from '../http/answer.ts';
import type { RequestSummary } from '../observability/plugin.ts';
import { clientEnd, readParams, type StreamDeps, writeResult } from './io.ts';
import { writeJson } from './json.ts';
import { writeMultipart } from './multipart.ts';
import type { Admitted, OperationEntry, OperationParams } from './operation.ts';
import { writeEventStream } from './sse.ts';

/** The streaming framing `accept` names first, if any (ranges refused with q=0 do not count). */
export function streamingType(accept: string): 'sse' | 'multipart' | undefined {
  for (const { mediaRange, q } of acceptRanges(accept)) {
    if (q <= 0) continue;
    if (mediaRange === 'text/event-stream') return 'sse';
    if (mediaRange === 'multipart/mixed') return 'multipart';
  }
  return undefined;
}

export interface HttpRequest {
  req: IncomingMessage;
  res: ServerResponse;
  admitted: Admitted;
  summary: RequestSummary;
}

/** Builds the GraphQL-over-HTTP adapter (GET, POST; JSON, SSE, multipart answers). */
export function createHttpTransport(entry: OperationEntry, streams: StreamDeps) {
  return async ({ req, res, admitted, summary }: HttpRequest): Promise<void> => {
    const accept = req.headers.accept ?? '';
    const jsonType = negotiate(req.headers.accept);
    const streaming = streamingType(accept);
    let params: OperationParams;
    try {
      params = await readParams(req);
    } catch (error) {
      writeResult(res, { errors: [error as GraphQLError] }, jsonType ?? 'application/json');
      return;
    }
    // A GET runs queries only, but for graphql-sse's distinct connections (an event stream and
    // nothing else accepted), which subscribe and mutate over GET too: routers such as Hive
    // Gateway subscribe to a subgraph that way.
    const eventStreamOnly = streaming === 'sse' && jsonType === undefined;
    const outcome = await entry.operate({
      admitted,
      params,
      method: req.method === 'GET' && !eventStreamOnly ? 'GET' : 'POST',
      req,
      summary,
      end: clientEnd(res),
      parts: streaming !== undefined,
    });
    if (outcome.kind === 'stream' && streaming === 'multipart') {
      return writeMultipart(res, outcome.stream, accept, streams);
    }
    if (streaming === 'sse' && (outcome.kind === 'stream' || jsonType === undefined)) {
      return writeEventStream(res, outcome, streams);
    }
    if (jsonType === undefined && streaming === undefined) {
      if (outcome.kind === 'stream') void outcome.stream.return();
      writeResult(
        res,
        {
          errors: [
            requestError(
              'Accept application/graphql-response+json, application/json, text/event-stream or multipart/mixed.',
              'GRAPHQL_VALIDATION_FAILED',
              406,
            ),
          ],
        },
        'application/json',
      );
      return;
    }
    writeJson(res, outcome, jsonType ?? 'application/json');
  };
}
