/**
 * The `business` label and log field: with several businesses, the request, upstream, webhook
 * metrics and their log lines name the business of the token (an id of the file, never one a
 * token made up), and a reload that removes a business removes its series; with one business
 * there is no such label or field.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import type { BusinessAccount } from '../../src/businesses/accounts.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { Gateway } from '../../src/server.ts';
import { until } from '../helpers/eventually.ts';
import { type Fixture, kycByRef, startFixture } from '../helpers/fixture.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { gql, TEST_JWT_SECRET } from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';
import { signWebhook } from '../helpers/webhook-signature.ts';

const SHOP_B_TOKEN = 'shop-b-payment-token-0123456789';
const WEBHOOK_SECRET_A = 'shop-a-webhook-secret-0123456789abcdef';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface Platform {
  url: string;
  gateway: Gateway;
  payment: Fixture;
  lines: Record<string, unknown>[];
  accounts: readonly BusinessAccount[];
  token(business?: string): Promise<string>;
}

/** Two businesses from a file; shop-b's payment calls fail (503). */
async function startPlatform(): Promise<Platform> {
  const payment = await startFixture((request, index) =>
    request.headers.authorization === `Bearer ${SHOP_B_TOKEN}`
      ? { status: 503 }
      : byRef(request, index),
  );
  const kyc = await startFixture(kycByRef);
  const dir = mkdtempSync(join(tmpdir(), 'business-observability-'));
  const file = join(dir, 'businesses.json');
  const account = (id: string, paymentAccessToken: string) => ({
    id,
    paymentAccessToken,
    kycSecretKey: `${id}-kyc-secret-0123456789`,
    kycPublicKey: `pk_test_${id}`,
    kycBusinessSlug: id,
  });
  writeFileSync(
    file,
    JSON.stringify({
      businesses: [
        {
          ...account('shop-a', 'shop-a-payment-token-0123456789'),
          webhookSecret: WEBHOOK_SECRET_A,
        },
        account('shop-b', SHOP_B_TOKEN),
      ],
    }),
  );
  const config = loadConfig({
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    PAYMENT_API_URL: payment.url,
    KYC_API_URL: kyc.url,
    KYC_SDK_SCRIPT_URL: `${kyc.url}/sdk/kyc.js`,
    BUSINESSES_FILE: file,
    RATE_LIMIT_RPS: '0',
    SERVICE_RATE_LIMIT_RPS: '0',
    UPSTREAM_TIMEOUT_MS: '1500',
    UPSTREAM_RETRY_BASE_DELAY_MS: '20',
    UPSTREAM_MAX_ATTEMPTS: '2',
    LOG_LEVEL: 'debug',
  });
  if (!config.payment || !config.kyc || !config.auth || !config.businesses) {
    throw new Error('test config incomplete');
  }
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(
    config.log,
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        }
        done();
      },
    }),
  );
  const gateway = createApp({
    config,
    payment: config.payment,
    kyc: config.kyc,
    auth: config.auth,
    logger,
    businesses: config.businesses.accounts,
  });
  const server = gateway.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  cleanups.push(
    () => rmSync(dir, { recursive: true, force: true }),
    payment.close,
    kyc.close,
    async () => {
      server.closeAllConnections();
      server.close();
      await gateway.close();
    },
  );
  return {
    url: `http://127.0.0.1:${port}`,
    gateway,
    payment,
    lines,
    accounts: config.businesses.accounts,
    token: (business) =>
      new SignJWT({ scope: 'transactions:read kyc:read', ...(business && { biz: business }) })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('platform-service')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(TEST_JWT_SECRET)),
  };
}

const QUERY = 'query Transaction { transaction(txRef: "NT-BIZLABEL1") { status } }';

describe('with several businesses', () => {
  it('labels request, upstream and webhook metrics and log lines with the business of the token, never another id', async () => {
    const platform = await startPlatform();
    const ok = await gql(platform, QUERY, {}, await platform.token('shop-a'));
    expect(ok.errors).toBeUndefined();
    const failed = await gql(platform, QUERY, {}, await platform.token('shop-b'));
    expect(JSON.stringify(failed.errors)).toContain('UPSTREAM_UNAVAILABLE');
    const callsBefore = platform.payment.requests.length;
    // No business, an unknown one: refused before any call, and never a label.
    expect((await gql(platform, QUERY, {}, await platform.token())).status).toBe(401);
    expect((await gql(platform, QUERY, {}, await platform.token('shop-z'))).status).toBe(401);
    expect(platform.payment.requests.length).toBe(callsBefore);
    // A notification with a wrong signature on shop-a's path.
    const body = JSON.stringify({ txRef: 'NT-BIZLABEL1' });
    const refused = await fetch(`${platform.url}/webhooks/payment/shop-a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-webhook-signature': signWebhook(body, ['not-the-secret-of-shop-a-at-all']),
      },
      body,
    });
    expect(refused.status).toBe(401);

    const requests = 'gateway_graphql_requests_total';
    expect(await metric(platform, requests, { business: 'shop-a', outcome: 'ok' })).toBe(1);
    expect(await metric(platform, requests, { business: 'shop-b', outcome: 'error' })).toBe(1);
    expect(await metric(platform, requests)).toBe(4);
    const calls = 'gateway_upstream_requests_total';
    expect(await metric(platform, calls, { business: 'shop-a', upstream: 'payment' })).toBe(1);
    expect(await metric(platform, calls, { business: 'shop-b', upstream: 'payment' })).toBe(2);
    expect(await metric(platform, 'gateway_upstream_retries_total', { business: 'shop-b' })).toBe(
      1,
    );
    expect(
      await metric(platform, 'gateway_upstream_circuit_state', {
        business: 'shop-a',
        upstream: 'kyc',
      }),
    ).toBe(0);
    expect(
      await metric(platform, 'gateway_webhooks_total', {
        business: 'shop-a',
        source: 'payment',
        outcome: 'bad_signature',
      }),
    ).toBe(1);
    const text = await (await fetch(`${platform.url}/metrics`)).text();
    const ids = new Set([...text.matchAll(/business="([^"]*)"/g)].map((match) => match[1]));
    expect([...ids].sort()).toEqual(['shop-a', 'shop-b']);
    // Upstream samples always name their business; nothing unlabelled beside them.
    expect(text).not.toMatch(/^gateway_upstream_\w+\{upstream="\w+"(,outcome="\w+")?\}/m);

    const isRequestLine = (line: Record<string, unknown>) => line.msg === 'graphql request';
    await until(() => platform.lines.filter(isRequestLine).length === 4, 2000);
    const requestLines = platform.lines.filter(isRequestLine);
    expect(requestLines.map((line) => line.business)).toEqual([
      'shop-a',
      'shop-b',
      undefined,
      undefined,
    ]);
    const upstreamLines = platform.lines.filter((line) => line.msg === 'upstream call failed');
    expect(upstreamLines.length).toBe(2);
    for (const line of upstreamLines) expect(line).toMatchObject({ business: 'shop-b' });
    expect(platform.lines.find((line) => line.msg === 'webhook refused')).toMatchObject({
      business: 'shop-a',
      outcome: 'bad_signature',
    });
    const all = JSON.stringify(platform.lines) + text;
    for (const secret of [SHOP_B_TOKEN, WEBHOOK_SECRET_A, 'shop-a-payment-token']) {
      expect(all).not.toContain(secret);
    }
  });

  it('removes the series of a business a reload removed, and keeps the others', async () => {
    const platform = await startPlatform();
    await gql(platform, QUERY, {}, await platform.token('shop-a'));
    await gql(platform, QUERY, {}, await platform.token('shop-b'));
    expect(await metric(platform, 'gateway_graphql_requests_total', { business: 'shop-b' })).toBe(
      1,
    );
    const report = await platform.gateway.businesses.replace(
      platform.accounts.filter((account) => account.id === 'shop-a'),
    );
    expect(report.removed).toEqual(['shop-b']);
    const text = await (await fetch(`${platform.url}/metrics`)).text();
    expect(text).not.toContain('business="shop-b"');
    expect(await metric(platform, 'gateway_graphql_requests_total', { business: 'shop-a' })).toBe(
      1,
    );
    expect(await metric(platform, 'gateway_upstream_requests_total', { business: 'shop-a' })).toBe(
      1,
    );
    // Its tokens are refused now, and bring no series back.
    expect((await gql(platform, QUERY, {}, await platform.token('shop-b'))).status).toBe(401);
    expect(await (await fetch(`${platform.url}/metrics`)).text()).not.toContain(
      'business="shop-b"',
    );
  });
});

describe('with one business', () => {
  it('has no business label and no business field: the series and lines of before', async () => {
    const logLines: string[] = [];
    const { gateway, token } = await setup(byRef, { logLines });
    await gql(gateway, QUERY, {}, token);
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).not.toContain('business=');
    expect(text).toMatch(/^gateway_upstream_circuit_state\{upstream="payment"\} 0$/m);
    expect(text).toMatch(
      /^gateway_graphql_requests_total\{operation="Transaction",outcome="ok"\} 1$/m,
    );
    await until(() => logLines.some((entry) => entry.includes('"graphql request"')), 2000);
    const line = logLines.find((entry) => entry.includes('"graphql request"'));
    expect(JSON.parse(line ?? '{}')).not.toHaveProperty('business');
  });
});
