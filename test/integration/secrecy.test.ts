/**
 * Proven secrecy: one full run over every demo and failure reference of the sandbox (including
 * an upstream error body that echoes the request's headers), with every response body and
 * header, every log line (at debug level) and the /metrics output collected. Neither upstream
 * credential, no client bearer token, no stack trace and no upstream address appears anywhere;
 * no personal data appears in the logs or metrics.
 */

import { print } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  KYC_DEMO_USERS,
  KYC_FAILURE_USERS,
  PAYMENT_DEMO_REFERENCES,
  PAYMENT_FAILURE_REFERENCES,
} from '../../sandbox/data.ts';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import {
  KycUserDocument,
  RefreshKycUserDocument,
  TransactionDocument,
  TransactionsDocument,
  VerifyTransactionDocument,
} from '../../src/client/generated/graphql.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
const logLines: string[] = [];
const responses: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ slowMs: 300, pendingSeconds: 1 });
  gateway = await startGateway(
    sandboxUpstreams(sandbox),
    { UPSTREAM_TIMEOUT_MS: '200', UPSTREAM_MAX_ATTEMPTS: '2', LOG_LEVEL: 'debug' },
    { logLines },
  );
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

/** The concrete references of a documentation table (`NT-GEN<anything>` → `NT-GEN1`). */
function refsOf(table: ReadonlyArray<{ ref: string }>): string[] {
  return table.map((row) => (row.ref.split(' ')[0] ?? '').replace(/<anything>|…/, '1'));
}

async function send(body: unknown, token: string | null, extra: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token !== null && { authorization: `Bearer ${token}` }),
      ...extra,
    },
    body: JSON.stringify(body),
  });
  responses.push(JSON.stringify([...response.headers]), await response.text());
}

it('no credential, token, stack trace or upstream address in any response, log or metric', async () => {
  const token = await gateway.token();
  const endUser = await gateway.token({ sub: 'usr_demo_tier1', scope: null });
  const txRefs = refsOf([...PAYMENT_DEMO_REFERENCES, ...PAYMENT_FAILURE_REFERENCES]);
  const userRefs = refsOf([...KYC_DEMO_USERS, ...KYC_FAILURE_USERS]);
  expect(txRefs).toContain('NT-ECHO001');

  await send({ query: print(TransactionsDocument), variables: { txRefs } }, token);
  for (const txRef of txRefs) {
    await send({ query: print(TransactionDocument), variables: { txRef } }, token);
    await send({ query: print(VerifyTransactionDocument), variables: { txRef } }, token);
  }
  for (const userRef of userRefs) {
    await send({ query: print(KycUserDocument), variables: { userRef } }, token);
    await send({ query: print(RefreshKycUserDocument), variables: { userRef } }, endUser);
  }
  // Refusals and malformed requests.
  await send({ query: print(TransactionDocument), variables: { txRef: 'NT-SUCCESS001' } }, null);
  await send(
    { query: print(TransactionDocument), variables: { txRef: 'NT-SUCCESS001' } },
    `${token}x`,
  );
  await send({ query: print(TransactionDocument), variables: { txRef: 'bad ref' } }, token);
  await send({ query: '{ transaction(txRef: ' }, token);
  for (const path of ['/healthz', '/readyz', '/metrics', '/nope']) {
    const response = await fetch(`${gateway.url}${path}`);
    responses.push(await response.text());
  }
  const metrics = responses.at(-2) ?? '';
  expect(metrics).toContain('gateway_upstream_requests_total');
  await new Promise((resolve) => setTimeout(resolve, 100));

  const everything = [...responses, ...logLines].join('\n');
  const { paymentAccessToken, kycSecretKey } = sandbox.credentials;
  expect(everything).not.toContain(paymentAccessToken);
  expect(everything).not.toContain(kycSecretKey);
  expect(everything).not.toContain(token);
  expect(everything).not.toContain(endUser);
  expect(everything).not.toMatch(/\n\s+at [\w.<>]+ \(/);
  expect(everything).not.toContain(sandbox.paymentUrl);
  expect(everything).not.toContain(sandbox.kycUrl);
  for (const port of [new URL(sandbox.paymentUrl).port, new URL(sandbox.kycUrl).port]) {
    expect(everything).not.toContain(`:${port}`);
  }
  // The echoing upstream was really called with the credential: the check above means something.
  expect(sandbox.requests.some((r) => r.path.endsWith('NT-ECHO001'))).toBe(true);

  const logsAndMetrics = [...logLines, metrics].join('\n');
  for (const personal of [
    'Adaeze Okafor',
    'adaeze.okafor@example.com',
    '2348012345678',
    'Emeka Nwosu',
    'usr_demo_tier1',
    '411111',
  ]) {
    expect(logsAndMetrics).not.toContain(personal);
  }
  expect(logLines.length).toBeGreaterThan(txRefs.length);
});
