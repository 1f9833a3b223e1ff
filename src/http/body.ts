/**
 * Reading a request's body, the one way every path does it (GraphQL transports, webhooks): from
 * the stream's events (an async iterator over the request added a promise per chunk), counting
 * the bytes as they arrive so that a body past its limit is never gathered.
 */
import type { IncomingMessage } from 'node:http';

/**
 * The whole body, or `'too_large'` as soon as more than `limit` bytes have arrived (the rest is
 * left unread). Rejects when the client goes away before the end.
 */
export function readBytes(req: IncomingMessage): Promise<Buffer>;
export function readBytes(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'>;
export function readBytes(
  req: IncomingMessage,
  limit = Number.POSITIVE_INFINITY,
): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        resolve('too_large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(new Error('the request was cut short'));
    });
  });
}
