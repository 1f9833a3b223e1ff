/**
 * The fast path answers exactly what Yoga's full pipeline answers: the same requests sent to a
 * gateway with FAST_PATH on and one with it off give the same status, media type and body.
 */

import { print } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  KycUserDocument,
  TransactionDocument,
  TransactionsDocument,
  VerifyTransactionDocument,
} from '../../src/client/generated/graphql.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';

let sandbox: Sandbox;
let fast: TestGateway;
let full: TestGateway;

beforeAll(async () => {
  sandbox = await startSandbox();
  const env = { UPSTREAM_TIMEOUT_MS: '500', UPSTREAM_MAX_ATTEMPTS: '1' };
  fast = await startGateway(sandboxUpstreams(sandbox), env);
  full = await startGateway(sandboxUpstreams(sandbox), { ...env, FAST_PATH: 'false' });
});
afterAll(async () => {
  await fast.close();
  await full.close();
  await sandbox.close();
});

async function answer(target: TestGateway, body: unknown, headers: Record<string, string>) {
  const response = await fetch(`${target.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

it('gives the same answers as the full pipeline, and serves the common ones itself', async () => {
  const merchant = await fast.token();
  const endUser = await fast.token({ sub: 'usr_demo_tier1', scope: null });
  const expired = await fast.token({ expiresIn: Math.floor(Date.now() / 1000) - 10 });
  const cases: Array<[string, unknown, Record<string, string>]> = [
    [
      'one transaction',
      { query: print(TransactionDocument), variables: { txRef: 'NT-SUCCESS001' } },
      {},
    ],
    ['unknown ref', { query: print(TransactionDocument), variables: { txRef: 'NT-NOPE1' } }, {}],
    [
      'partial failures',
      {
        query: print(TransactionsDocument),
        variables: {
          txRefs: ['NT-FAILED001', 'NT-ERROR500', 'NT-BADSHAPE001', 'NT-UNAUTH001', 'NT-X9'],
        },
      },
      {},
    ],
    ['bad ref', { query: print(TransactionDocument), variables: { txRef: 'nope' } }, {}],
    [
      'mutation',
      { query: print(VerifyTransactionDocument), variables: { txRef: 'NT-USD001' } },
      {},
    ],
    ['kyc', { query: print(KycUserDocument), variables: { userRef: 'usr_demo_tier3' } }, {}],
    [
      'kyc envelope error',
      { query: print(KycUserDocument), variables: { userRef: 'usr_kyc_envelope' } },
      {},
    ],
    [
      'graphql-response+json',
      { query: '{ gatewayInfo { sandbox } }' },
      { accept: 'application/graphql-response+json' },
    ],
    [
      'both types',
      { query: '{ gatewayInfo { sandbox } }' },
      { accept: 'application/json, application/graphql-response+json' },
    ],
    ['invalid field', { query: '{ gatewayInfo { nope } }' }, {}],
    ['parse error', { query: '{ gatewayInfo {' }, {}],
    ['missing variable', { query: print(TransactionDocument) }, {}],
    [
      'wrong operation name',
      { query: print(TransactionDocument), operationName: 'Nope', variables: { txRef: 'NT-A1' } },
      {},
    ],
    ['not json', 'nope', {}],
    ['unacceptable accept', { query: '{ gatewayInfo { sandbox } }' }, { accept: 'text/csv' }],
  ];
  const before = await (await fetch(`${fast.url}/metrics`)).text();
  const answered = (text: string) =>
    Number(/gateway_fast_path_total\{outcome="answered"\} (\d+)/.exec(text)?.[1] ?? 0);
  for (const [label, body, extra] of cases) {
    for (const token of [merchant, endUser, expired]) {
      const headers = { authorization: `Bearer ${token}`, ...extra };
      const [a, b] = [await answer(fast, body, headers), await answer(full, body, headers)];
      expect({ label, ...a }).toEqual({ label, ...b });
    }
  }
  const after = await (await fetch(`${fast.url}/metrics`)).text();
  expect(answered(after) - answered(before)).toBeGreaterThanOrEqual(12);
});
