/**
 * Answers hold names, e-mails, phones and card digits: every GraphQL answer, whichever path
 * produced it and whatever its status, tells caches not to store it and browsers not to sniff it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { sandboxUpstreams, startGateway, type TestGateway } from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
let token: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  gateway = await startGateway(sandboxUpstreams(sandbox), {
    SERVICE_RATE_LIMIT_RPS: '1',
    SERVICE_RATE_LIMIT_BURST: '8',
  });
  token = await gateway.token({ sub: 'headers-test' });
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

const QUERY = '{ transaction(txRef: "NT-SUCCESS001") { customer { email } card { last4 } } }';

const post = (body: unknown, headers: Record<string, string>) =>
  fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

it('carry Cache-Control: no-store and X-Content-Type-Options: nosniff', async () => {
  const auth = { authorization: `Bearer ${token}` };
  const answers: Record<string, Response> = {
    'JSON POST': await post({ query: QUERY }, auth),
    'GET query': await fetch(`${gateway.url}/graphql?query=${encodeURIComponent(QUERY)}`, {
      headers: { ...auth, accept: 'application/json' },
    }),
    'parse error': await post({ query: '{ transaction(' }, auth),
    'persisted document unknown': await post(
      { extensions: { persistedQuery: { version: 1, sha256Hash: 'ab'.repeat(32) } } },
      auth,
    ),
    'no token': await post({ query: QUERY }, {}),
    'server-sent events': await post(
      { query: 'subscription { transactionStatus(txRef: "NT-SUCCESS001") { status } }' },
      { ...auth, accept: 'text/event-stream' },
    ),
  };
  let limited: Response | undefined;
  for (let i = 0; i < 20 && !limited; i++) {
    const response = await post({ query: '{ gatewayInfo { version } }' }, auth);
    if (response.status === 429) limited = response;
    else await response.arrayBuffer();
  }
  if (!limited) throw new Error('the rate limit never answered 429');
  answers['rate limited'] = limited;

  for (const [label, response] of Object.entries(answers)) {
    await response.arrayBuffer();
    expect({ label, cache: response.headers.get('cache-control') }).toEqual({
      label,
      cache: 'no-store',
    });
    expect({ label, sniff: response.headers.get('x-content-type-options') }).toEqual({
      label,
      sniff: 'nosniff',
    });
  }
  expect(answers['no token']?.status).toBe(401);
});
