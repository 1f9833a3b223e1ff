/**
 * Logs and metrics of a full run with failures: one line per request with its request id,
 * operation and codes; metrics for every failure kind; and no credential or personal data in
 * any log line or metric.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TransactionDocument, TransactionsDocument } from '../../src/client/generated/graphql.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { transactionBody } from '../helpers/fixture.ts';
import { setup } from '../helpers/fixture-gateway.ts';
import { gql, KYC_SECRET, PAYMENT_TOKEN } from '../helpers/gateway.ts';

const PII = {
  fullname: 'Chiamaka Obi-Private',
  email: 'chiamaka.private@example.org',
  phone: '2348099988877',
};

describe('logs and metrics', () => {
  it('log one line per request, honour x-request-id, and count every failure kind', async () => {
    const logLines: string[] = [];
    const { gateway, token } = await setup(
      (request) => {
        const ref = request.path.split('/').pop() ?? '';
        if (ref === 'NT-DOWN1') return { status: 503 };
        if (ref === 'NT-BAD1') return { body: '<html>' };
        if (ref === 'NT-AUTH1') return { status: 401, body: { echo: request.headers } };
        if (ref === 'NT-SLOW1') return { body: transactionBody(), delayMs: 800 };
        return { body: transactionBody({ customer: { ...PII, joinedAt: null } }) };
      },
      { logLines, env: { UPSTREAM_TIMEOUT_MS: '300', UPSTREAM_MAX_ATTEMPTS: '2' } },
    );
    const response = await gql(
      gateway,
      TransactionsDocument,
      { txRefs: ['NT-OK1', 'NT-DOWN1', 'NT-BAD1', 'NT-AUTH1', 'NT-SLOW1'] },
      token,
      { 'x-request-id': 'req-abc-123' },
    );
    expect(response.headers.get('x-request-id')).toBe('req-abc-123');
    const full = await gql(gateway, TransactionDocument, { txRef: 'NT-OK2' }, token);
    expect(full.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await gql(gateway, TransactionDocument, { txRef: 'NT-OK3' }, token, {
      'x-request-id': 'bad id with spaces; and $(commands)',
    });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    await new Promise((resolve) => setTimeout(resolve, 50));
    const entries = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const requestLines = entries.filter((e) => e.msg === 'graphql request');
    expect(requestLines).toHaveLength(3);
    expect(requestLines[0]).toMatchObject({
      requestId: 'req-abc-123',
      operation: 'Transactions',
      status: 200,
    });
    expect([...((requestLines[0]?.errorCodes as string[] | undefined) ?? [])].sort()).toEqual([
      'UPSTREAM_AUTH_FAILED',
      'UPSTREAM_BAD_RESPONSE',
      'UPSTREAM_TIMEOUT',
      'UPSTREAM_UNAVAILABLE',
    ]);
    expect(typeof requestLines[0]?.durationMs).toBe('number');
    expect(entries.some((e) => e.msg === 'upstream call failed' && e.outcome === 'timeout')).toBe(
      true,
    );

    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    for (const pattern of [
      /gateway_graphql_requests_total\{operation="Transactions",outcome="error"\} 1/,
      /gateway_graphql_requests_total\{operation="Transaction",outcome="ok"\} 2/,
      /gateway_graphql_errors_total\{operation="Transactions",code="UPSTREAM_TIMEOUT"\} 1/,
      /gateway_upstream_requests_total\{upstream="payment",outcome="retryable"\} 2/,
      /gateway_upstream_requests_total\{upstream="payment",outcome="http_error"\} 1/,
      /gateway_upstream_requests_total\{upstream="payment",outcome="timeout"\} 1/,
      /gateway_upstream_request_duration_seconds_bucket\{le="0.005",upstream="payment",outcome="ok"\}/,
      /gateway_cache_events_total\{kind="transaction",outcome="miss"\} \d+/,
    ]) {
      expect(metrics).toMatch(pattern);
    }
    const everything = `${logLines.join('\n')}\n${metrics}`;
    for (const secret of [PAYMENT_TOKEN, KYC_SECRET, token, PII.fullname, PII.email, PII.phone]) {
      expect(everything).not.toContain(secret);
    }
    expect(everything).not.toContain('127.0.0.1');
  });

  it('a hostile operation name does not become a metric label', async () => {
    const { gateway, token } = await setup(() => ({ body: transactionBody() }));
    const name = 'Q'.repeat(100);
    await gql(gateway, `query ${name} { transaction(txRef: "NT-A1") { txRef } }`, {}, token);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).not.toContain(name);
    expect(metrics).toMatch(/gateway_graphql_requests_total\{operation="other",outcome="ok"\} 1/);
  });
});

describe('redaction', () => {
  it('redacts credentials and personal data by default, and extra paths by configuration', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = createLogger({ level: 'info', redactPaths: ['details.iban'] }, sink);
    logger.info(
      {
        req: { headers: { authorization: 'Bearer abc.def.ghi', 'x-secret-key': 'sk_live_1' } },
        record: {
          customer: { fullname: PII.fullname, email: PII.email, phone: PII.phone },
          card: { first: '539983', last: '8381' },
        },
        user: { name: 'Ada Lovelace', levels: [{ kyc: [{ query: { bvn: '22233344455' } }] }] },
        details: { iban: 'NG00BANK1234567890' },
        kept: 'visible-value',
      },
      'test line',
    );
    const text = lines.join('');
    for (const hidden of [
      'abc.def.ghi',
      'sk_live_1',
      PII.fullname,
      PII.email,
      PII.phone,
      '539983',
      'Ada Lovelace',
      '22233344455',
      'NG00BANK1234567890',
    ]) {
      expect(text).not.toContain(hidden);
    }
    expect(text).toContain('visible-value');
    expect(text).toContain('[redacted]');
  });
});
