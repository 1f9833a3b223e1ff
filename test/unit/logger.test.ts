import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CENSOR, createLogger } from '../../src/observability/logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(
    { level: 'info', redactPaths: [] },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { logger, lines };
}

describe('log redaction', () => {
  it('censors sensitive keys at any depth, in arrays too, and leaves the logged object as it was', () => {
    const { logger, lines } = capture();
    const record = {
      requestId: 'r1',
      upstream: { records: [{ txRef: 'NT-1', customer: { email: 'a@b.c' } }, { Email: 'x@y.z' }] },
      Authorization: 'Bearer secret',
    };
    const before = structuredClone(record);
    logger.info(record, 'line');
    expect(lines[0]).toMatchObject({
      requestId: 'r1',
      upstream: { records: [{ txRef: 'NT-1', customer: CENSOR }, { Email: CENSOR }] },
      Authorization: CENSOR,
    });
    expect(record).toEqual(before);
  });

  it('logs a line with nothing sensitive whole', () => {
    const { logger, lines } = capture();
    logger.info(
      { requestId: 'r2', status: 200, errorCodes: ['UPSTREAM_TIMEOUT'] },
      'graphql request',
    );
    expect(lines[0]).toMatchObject({
      requestId: 'r2',
      status: 200,
      errorCodes: ['UPSTREAM_TIMEOUT'],
    });
  });
});
