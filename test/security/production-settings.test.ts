/**
 * A production start that a forgotten or unsafe setting must stop, with real `node src/main.ts`
 * processes: no built-in sandbox (invented payments) unless asked for, no token printed, no
 * authentication switched off, no plain http to another machine; and a loud word when Redis
 * would hold personal data in clear. The full matrix of settings is in test/unit/config.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, startFixture, transactionBody } from '../helpers/fixture.ts';
import { TEST_JWT_SECRET } from '../helpers/gateway.ts';
import {
  type ExitedProcess,
  type GatewayProcess,
  query,
  runToExit,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { freePort } from '../helpers/redis.ts';

afterAll(stopAllGateways);

/** Complete production settings over https upstreams (none is called: the start is refused). */
const httpsUpstreams = {
  PAYMENT_API_URL: 'https://payments.example.com',
  PAYMENT_ACCESS_TOKEN: 'payment-token-SECRET-42',
  KYC_API_URL: 'https://kyc.example.com',
  KYC_SECRET_KEY: 'kyc-secret-SECRET-42',
  KYC_PUBLIC_KEY: 'pk_live',
  KYC_BUSINESS_SLUG: 'shop',
  KYC_SDK_SCRIPT_URL: 'https://kyc.example.com/sdk.js',
  AUTH_JWT_SECRET: TEST_JWT_SECRET,
};

/** A JWT (header `{"…` in base64url) or a bearer header anywhere in the output. */
const TOKEN_LIKE = /eyJ|Bearer/;

/** Starts a production gateway that must refuse; asserts the common shape of a refusal. */
async function refused(env: Record<string, string>): Promise<ExitedProcess & { line: string }> {
  const port = await freePort();
  const exited = await runToExit({ NODE_ENV: 'production', PORT: String(port), ...env });
  expect(exited.code).toBe(1);
  const lines = exited.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(exited.stdout).not.toContain('serving GraphQL');
  expect(exited.stdout + exited.stderr).not.toMatch(TOKEN_LIKE);
  for (const secret of [TEST_JWT_SECRET, 'SECRET-42']) {
    expect(exited.stdout + exited.stderr).not.toContain(secret);
  }
  // Nothing listens on the port it was given.
  const served = await fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => true,
    () => false,
  );
  expect(served).toBe(false);
  return { ...exited, line: lines[0] ?? '' };
}

describe('production refuses to start', () => {
  it('without API URLs (no sandbox of invented payments), naming PAYMENT_API_URL', async () => {
    const { line } = await refused({});
    expect(line).toMatch(/^Cannot start: PAYMENT_API_URL: must be set in production/);
    expect(line).toContain('SANDBOX=true');
  });

  it('a sandbox asked for with SANDBOX=true but no auth setting: no token is made and printed', async () => {
    const { line } = await refused({ SANDBOX: 'true' });
    expect(line).toContain('AUTH_JWT_SECRET');
  });

  it('with AUTH_DISABLED=true, naming it', async () => {
    const { line } = await refused({ ...httpsUpstreams, AUTH_DISABLED: 'true' });
    expect(line).toMatch(/^Cannot start: AUTH_DISABLED: /);
  });

  it('with plain http to a host that is not loopback, naming the variable', async () => {
    const { line } = await refused({
      ...httpsUpstreams,
      PAYMENT_API_URL: 'http://payments.example.com',
    });
    expect(line).toMatch(/^Cannot start: PAYMENT_API_URL: must use https in production/);
  });
});

describe('a production sandbox asked for with SANDBOX=true and AUTH_JWT_SECRET', () => {
  let gateway: GatewayProcess;

  beforeAll(async () => {
    // Redis on a port nobody listens on: the start does not wait for it beyond 100 ms.
    gateway = await spawnGateway(
      { paymentUrl: '', kycUrl: '' },
      {
        NODE_ENV: 'production',
        SANDBOX: 'true',
        KYC_SDK_SCRIPT_URL: '',
        LOG_LEVEL: 'info',
        CACHE_URL: `redis://127.0.0.1:${await freePort()}`,
        CACHE_CONNECT_TIMEOUT_MS: '100',
        // A mistyped setting: its warning is a log line too.
        CACHE_TTL_FINAL_SECOND: '60',
        SHUTDOWN_DRAIN_MS: '200',
      },
    );
  });

  it('serves the sandbox to signed tokens only, and never prints or mints one', async () => {
    expect(gateway.output()).toContain('Sandbox mode');
    const anonymous = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-graphql-yoga-csrf': '1' },
      body: JSON.stringify({ query: '{ transaction(txRef: "NT-SUCCESS001") { status } }' }),
    });
    expect(anonymous.status).toBe(401);
    const signed = await query(
      gateway,
      '{ transaction(txRef: "NT-SUCCESS001") { status } }',
      await testToken(),
    );
    expect(signed.body).toEqual({ data: { transaction: { status: 'SUCCESSFUL' } } });
    // The /kyc page asks for the end user's token instead of signing a demo one.
    const page = await (await fetch(`${gateway.url}/kyc?userRef=usr_demo_tier1`)).text();
    expect(page).not.toMatch(/eyJ/);
    expect(gateway.output()).not.toMatch(TOKEN_LIKE);
  });

  it('says that Redis would hold personal data in clear (no CACHE_ENCRYPTION_KEY), as a warning', () => {
    const warnings = gateway
      .stdout()
      .split('\n')
      .filter((line) => line.includes('CACHE_ENCRYPTION_KEY is not set'))
      .map((line) => JSON.parse(line) as { level: string });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.level).toBe('warn');
  });

  it('writes nothing but JSON lines on stdout, from the start to its exit', async () => {
    expect(await gateway.stop('SIGTERM')).toBe(0);
    const lines = gateway.stdout().split('\n');
    expect(lines.pop()).toBe('');
    const objects = lines.map((line) => {
      try {
        return JSON.parse(line) as { level?: unknown; msg?: unknown };
      } catch {
        throw new Error(`not a JSON line: ${JSON.stringify(line)}`);
      }
    });
    for (const object of objects) {
      expect(typeof object.level).toBe('string');
      expect(typeof object.msg).toBe('string');
    }
    const messages = objects.map((object) => String(object.msg));
    // What a person reads elsewhere is there: the mistyped setting, where it serves, the
    // sandbox, the shutdown.
    for (const said of [
      /CACHE_TTL_FINAL_SECOND is not a setting; did you mean CACHE_TTL_FINAL_SECONDS/,
      /^Gateway serving GraphQL at http:\/\/127\.0\.0\.1:\d+\/graphql$/,
      /^Sandbox mode/,
      /ready in \d+ ms/,
      /^shutting down/,
    ]) {
      expect(messages.some((message) => said.test(message))).toBe(true);
    }
  });
});

describe('production accepts', () => {
  let payment: Fixture;
  beforeAll(async () => {
    payment = await startFixture(() => ({ body: transactionBody() }));
  });
  afterAll(() => payment?.close());

  it('plain http to a loopback upstream, and a cache key without the warning', async () => {
    const gateway = await spawnGateway(
      { paymentUrl: payment.url, kycUrl: 'http://localhost:9' },
      {
        NODE_ENV: 'production',
        CACHE_URL: `redis://127.0.0.1:${await freePort()}`,
        CACHE_CONNECT_TIMEOUT_MS: '100',
        CACHE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      },
    );
    const answer = await query(
      gateway,
      '{ transaction(txRef: "NT-LOOP1") { status } }',
      await testToken(),
    );
    expect(answer.body).toEqual({ data: { transaction: { status: 'SUCCESSFUL' } } });
    expect(gateway.output()).not.toContain('CACHE_ENCRYPTION_KEY');
    expect(await gateway.stop()).toBe(0);
  });

  it('plain http to another host with ALLOW_INSECURE_HTTP=true (no call is made to start)', async () => {
    const gateway = await spawnGateway(
      { paymentUrl: 'http://payments.example.com', kycUrl: 'http://kyc.example.com' },
      { NODE_ENV: 'production', ALLOW_INSECURE_HTTP: 'true' },
    );
    expect(gateway.output()).not.toMatch(TOKEN_LIKE);
    expect(await gateway.stop()).toBe(0);
  });
});

describe("production keeps no payment claim in one process's memory unless told to", () => {
  let payment: Fixture;
  beforeAll(async () => {
    payment = await startFixture((request) => ({
      body: transactionBody({ paymentRef: request.path.split('/').pop(), amount: '1000.50' }),
    }));
  });
  afterAll(() => payment?.close());

  const CONFIRM = (order: string) =>
    `mutation { confirmPayment(txRef: "NT-MEMCLAIM1", order: { id: "${order}", amount: "1000.50", currency: "NGN" }) { confirmed problems } }`;

  it('without CACHE_URL, confirmPayment confirms nothing and says why; the start says so', async () => {
    const gateway = await spawnGateway(
      { paymentUrl: payment.url, kycUrl: 'http://localhost:9' },
      { NODE_ENV: 'production', LOG_LEVEL: 'info' },
    );
    const token = await testToken('merchant-backend', 'transactions:read');
    for (const order of ['order-1', 'order-2']) {
      const { body } = await query(gateway, CONFIRM(order), token);
      expect(body.data).toBeNull();
      const [error] = body.errors as Array<{ message: string; extensions: object }>;
      expect(error?.extensions).toMatchObject({
        code: 'UPSTREAM_UNAVAILABLE',
        reason: 'CLAIMS_UNVERIFIED',
      });
      expect(error?.message).toMatch(/only in this process's memory/);
    }
    expect(gateway.output()).toContain('payment confirmations: refused');
    expect(await gateway.stop()).toBe(0);
  });

  it('with ALLOW_MEMORY_CLAIMS=true, one payment confirms one order (in this process)', async () => {
    const gateway = await spawnGateway(
      { paymentUrl: payment.url, kycUrl: 'http://localhost:9' },
      { NODE_ENV: 'production', ALLOW_MEMORY_CLAIMS: 'true' },
    );
    const token = await testToken('merchant-backend', 'transactions:read');
    const first = await query(gateway, CONFIRM('order-1'), token);
    expect(first.body.data?.confirmPayment).toEqual({ confirmed: true, problems: [] });
    const second = await query(gateway, CONFIRM('order-2'), token);
    expect(second.body.data?.confirmPayment).toEqual({
      confirmed: false,
      problems: ['ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'],
    });
    expect(await gateway.stop()).toBe(0);
  });
});
