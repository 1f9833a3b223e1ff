/**
 * Subscriptions over `multipart/mixed` as Apollo clients ask for them (Apollo Client's HttpLink,
 * Apollo Kotlin and iOS): `Accept: multipart/mixed;boundary="graphql";subscriptionSpec=1.0`.
 * Each event is a part `{"payload": <result>}`, a part `{}` keeps the connection alive, and the
 * closing boundary ends the stream. Yoga's own multipart answer is the incremental-delivery
 * format, which it does not offer for subscriptions (406), and which these clients do not read.
 *
 * Only the framing is here: the results come from the same pipeline as every other transport.
 */
import { type ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

const BOUNDARY = 'graphql';
const HEARTBEAT_MS = 5000;

/** Whether the request asks for Apollo's multipart subscription protocol. */
function wantsApolloMultipart(accept: string | null): boolean {
  return accept !== null && /multipart\/mixed/i.test(accept) && /subscriptionSpec/i.test(accept);
}

function part(body: unknown): string {
  return `\r\n--${BOUNDARY}\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${JSON.stringify(body)}`;
}

/** The Yoga plugin; `finish` gives each result its `ErrorCode` values. */
export function useApolloMultipartSubscriptions(
  finish: (result: ExecutionResult) => ExecutionResult,
): Plugin {
  return {
    onResultProcess({ request, result, setResultProcessor }) {
      if (!isAsyncIterable(result) || !wantsApolloMultipart(request.headers.get('accept'))) return;
      setResultProcessor((stream, fetchAPI) => {
        const iterator = (stream as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator]();
        const encoder = new TextEncoder();
        let heartbeat: ReturnType<typeof setInterval> | undefined;
        const body = new fetchAPI.ReadableStream<Uint8Array>({
          start(controller) {
            heartbeat = setInterval(
              () => controller.enqueue(encoder.encode(part({}))),
              HEARTBEAT_MS,
            );
          },
          async pull(controller) {
            try {
              const next = await iterator.next();
              if (next.done) {
                clearInterval(heartbeat);
                controller.enqueue(encoder.encode(`\r\n--${BOUNDARY}--\r\n`));
                controller.close();
                return;
              }
              const { errors, ...rest } = finish(next.value);
              const payload = {
                ...rest,
                ...(errors && { errors: errors.map((error) => error.toJSON()) }),
              };
              controller.enqueue(encoder.encode(part({ payload })));
            } catch (error) {
              // A refusal from the stream itself (unknown reference, watch limit): its error,
              // with its code; anything else masked.
              clearInterval(heartbeat);
              const shown = finish({
                errors: [
                  error instanceof GraphQLError
                    ? error
                    : new GraphQLError('Unexpected error.', {
                        extensions: { code: 'INTERNAL_SERVER_ERROR' },
                      }),
                ],
              });
              const errors = (shown.errors ?? []).map((e) => e.toJSON());
              controller.enqueue(
                encoder.encode(`${part({ payload: { errors } })}\r\n--${BOUNDARY}--\r\n`),
              );
              controller.close();
            }
          },
          async cancel() {
            clearInterval(heartbeat);
            await iterator.return?.();
          },
        });
        return new fetchAPI.Response(body, {
          status: 200,
          headers: {
            'content-type': `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec=1.0`,
          },
        });
      }, 'multipart/mixed');
    },
  };
}
