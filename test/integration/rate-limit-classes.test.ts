/**
 * Two kinds of callers, two rates: a merchant's backend with one service token (scopes) serves
 * all its customers and gets the service rate; an end user's token (no scope) gets the end-user
 * rate. Their buckets never meet, even for the same subject.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import {
  codesOf,
  gql,
  sandboxUpstreams,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;

beforeAll(async () => {
  sandbox = await startSandbox();
  gateway = await startGateway(sandboxUpstreams(sandbox), {
    RATE_LIMIT_RPS: '1',
    RATE_LIMIT_BURST: '3',
    SERVICE_RATE_LIMIT_RPS: '1',
    SERVICE_RATE_LIMIT_BURST: '12',
  });
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

/** How many of `n` quick requests with `token` are allowed before the first 429. */
async function allowed(token: string, n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const response = await gql(gateway, '{ gatewayInfo { version } }', {}, token);
    if (response.status === 429) {
      expect(codesOf(response)).toEqual(['RATE_LIMITED']);
      return ok;
    }
    ok += 1;
  }
  return ok;
}

it('gives a service token the service burst and an end user the end-user burst', async () => {
  const service = await gateway.token({ sub: 'merchant-backend' });
  const endUser = await gateway.token({ sub: 'usr_rate', scope: null });
  expect(await allowed(endUser, 20)).toBe(3);
  expect(await allowed(service, 20)).toBe(12);
});

it('keeps the two kinds apart for the same subject', async () => {
  const sameSubjectUser = await gateway.token({ sub: 'shared-sub', scope: null });
  const sameSubjectService = await gateway.token({ sub: 'shared-sub' });
  expect(await allowed(sameSubjectUser, 20)).toBe(3);
  expect(await allowed(sameSubjectService, 20)).toBe(12);
});
