/**
 * The `multipart/mixed` adapter: a stream (a subscription, or an incremental result) is written
 * part by part as each result exists (a single result is the JSON adapter's).
 *
 * - Apollo's subscription protocol (`Accept: multipart/mixed;subscriptionSpec=1.0`, Apollo
 *   Client's HttpLink, Apollo Kotlin and iOS): each result is a part `{"payload": <result>}`, a
 *   part `{}` every 5 s keeps the connection alive, the closing boundary ends the stream;
 * - otherwise (incremental delivery, `deferSpec=20220824`): each part is the result itself.
 *
 * This file only frames: http.ts reads the operation and runs it through the operation entry.
 */
import type { ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { responseWriter, type StreamDeps } from './io.ts';
import { publicResult } from './operation.ts';

const BOUNDARY = 'graphql';
const HEARTBEAT_MS = 5000;

/**
 * One part, closed by the boundary at once: a client hands a part on when it sees the delimiter
 * that ends it, so a part followed by its delimiter only with the next part would wait for it.
 */
function part(body: unknown): string {
  return `\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${JSON.stringify(body)}\r\n--${BOUNDARY}`;
}

/**
 * Writes a stream part by part, each as soon as it exists (`accept` chooses Apollo's
 * subscription framing or incremental delivery's); resolves when the stream has ended.
 */
export async function writeMultipart(
  res: ServerResponse,
  stream: AsyncGenerator<ExecutionResult, void, undefined>,
  accept: string,
  streams: StreamDeps,
): Promise<void> {
  const apollo = /subscriptionSpec/i.test(accept);
  const spec = apollo ? 'subscriptionSpec=1.0' : 'deferSpec=20220824';
  res.writeHead(200, {
    'content-type': `multipart/mixed;boundary="${BOUNDARY}";${spec}`,
    'x-accel-buffering': 'no',
  });
  const writer = responseWriter(res, streams, 'multipart');
  // The opening delimiter; each part then ends with the next one, the last with `--`.
  writer.write(`\r\n--${BOUNDARY}`);
  const heartbeat = apollo
    ? setInterval(() => writer.writeIfIdle(part({})), HEARTBEAT_MS)
    : undefined;
  try {
    // The next result is pulled only once the client has taken the previous ones.
    while (await writer.ready()) {
      const next = await stream.next();
      if (next.done) break;
      const result = next.value;
      writer.write(part(apollo ? { payload: publicResult(result) } : publicResult(result)));
    }
    if (!writer.ended) res.end('--\r\n');
  } finally {
    clearInterval(heartbeat);
    writer.close();
    void stream.return();
  }
}
