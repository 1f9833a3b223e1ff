import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CENSOR, createLogger, writeRequestLine } from '../../src/observability/logger.ts';

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

describe('the request line', () => {
  const fields = {
    requestId: 'r3',
    business: undefined as string | undefined,
    transport: 'http' as const,
    operation: 'Transaction',
    operationType: 'query',
    status: 200,
    durationMs: 12.3,
    errorCodes: ['UPSTREAM_TIMEOUT', 'FORBIDDEN'],
    traceId: undefined,
    spanId: undefined,
  };

  it('is the line pino writes for the same fields, the undefined ones left out', () => {
    const { logger, lines } = capture();
    writeRequestLine(logger, fields);
    logger.info({ ...fields }, 'graphql request');
    const traced = {
      ...fields,
      business: 'shop-b',
      operationType: undefined,
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      operation: 'we"ird\\name',
    };
    writeRequestLine(logger, traced);
    logger.info({ ...traced }, 'graphql request');
    const [direct, viaPino, directTraced, viaPinoTraced] = lines.map(({ time, ...rest }) => {
      expect(typeof time).toBe('string');
      return rest;
    });
    expect(direct).toEqual(viaPino);
    expect(Object.keys(direct ?? {})).toEqual(Object.keys(viaPino ?? {}));
    expect(direct).not.toHaveProperty('business');
    expect(directTraced).toEqual(viaPinoTraced);
    expect(Object.keys(directTraced ?? {})).toEqual(Object.keys(viaPinoTraced ?? {}));
    expect(directTraced).toMatchObject({ requestId: 'r3', business: 'shop-b' });
    expect(directTraced).not.toHaveProperty('operationType');
    expect(direct).toMatchObject({
      level: 'info',
      service: 'payment-kyc-gateway',
      msg: 'graphql request',
    });
  });

  it('is not written below info, and goes through pino (and its redaction paths) when paths are set', () => {
    const quiet = createLogger(
      { level: 'warn', redactPaths: [] },
      new Writable({
        write(_chunk, _encoding, done) {
          done(new Error('nothing should be written'));
        },
      }),
    );
    writeRequestLine(quiet, fields);
    const lines: Record<string, unknown>[] = [];
    const redacting = createLogger(
      { level: 'info', redactPaths: ['operation'] },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
          done();
        },
      }),
    );
    writeRequestLine(redacting, fields);
    expect(lines[0]).toMatchObject({ requestId: 'r3', operation: CENSOR, status: 200 });
  });
});
