/**
 * The /kyc page over plain HTTP (the browser tests drive it in Chromium): off unless enabled,
 * its headers (CSP allowing the SDK's origin), where its token comes from, what a demo token
 * may read, and that nothing it serves holds a credential. Also the typed client it uses,
 * from Node: a query and the live subscription.
 */
import { decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import {
  createGatewayClient,
  PageKycSdkConfigDocument,
  PageKycUserDocument,
  PagePaymentDocument,
  PagePaymentStatusDocument,
} from '../../src/client/index.ts';
import { loadConfig } from '../../src/config.ts';
import { until } from '../helpers/eventually.ts';
import {
  codesOf,
  gql,
  sandboxUpstreams,
  startGateway,
  TEST_JWT_SECRET,
  type TestGateway,
} from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';

let sandbox: Sandbox;
/** KYC_PAGE=true and demo tokens: sandbox mode as `npm start` runs it. */
let demo: TestGateway;
/** KYC_PAGE=true without demo tokens: production with the page enabled. */
let production: TestGateway;
/** The page off (the default outside sandbox mode). */
let off: TestGateway;

beforeAll(async () => {
  sandbox = await startSandbox({ pendingSeconds: 1 });
  const upstreams = sandboxUpstreams(sandbox);
  demo = await startGateway(
    upstreams,
    { KYC_PAGE: 'true', LIVE_POLL_MS: '200' },
    { kycPageDemoSecret: TEST_JWT_SECRET },
  );
  production = await startGateway(upstreams, { KYC_PAGE: 'true', NODE_ENV: 'production' });
  off = await startGateway(upstreams);
});
afterAll(async () => {
  await Promise.all([demo.close(), production.close(), off.close()]);
  await sandbox.close();
});

/** What the gateway writes into the page (web/kyc/main.ts reads it). */
interface PageConfig {
  mode?: string;
  token?: string;
  userRef?: string;
  name?: string;
  levelSlug?: string;
  error?: string;
  txRefs?: string[];
  pendingTxRef?: string;
}

/** The JSON the gateway wrote into the page. */
function pageConfig(html: string): PageConfig {
  const match = /<script type="application\/json" id="kyc-page-config">(.*?)<\/script>/s.exec(html);
  if (!match?.[1]) throw new Error('no page config in the page');
  return JSON.parse(match[1]) as PageConfig;
}

describe('when it is served', () => {
  it('is on in sandbox mode, off in production unless KYC_PAGE=true', () => {
    expect(loadConfig({}).kycPage).toBe(true);
    const prod = { AUTH_JWT_SECRET: TEST_JWT_SECRET, NODE_ENV: 'production' };
    const upstream = {
      PAYMENT_API_URL: 'https://pay.example',
      PAYMENT_ACCESS_TOKEN: 't',
      KYC_API_URL: 'https://kyc.example',
      KYC_SECRET_KEY: 's',
      KYC_PUBLIC_KEY: 'p',
      KYC_BUSINESS_SLUG: 'b',
      KYC_SDK_SCRIPT_URL: 'https://sdk.example/kyc.js',
    };
    expect(loadConfig({ ...prod, ...upstream }).kycPage).toBe(false);
    expect(loadConfig({ ...prod, ...upstream, KYC_PAGE: 'true' }).kycPage).toBe(true);
    expect(loadConfig({ KYC_PAGE: 'false' }).kycPage).toBe(false);
  });

  it('answers 404 on every page path when off', async () => {
    for (const path of ['/kyc', '/kyc/', '/kyc/page.js', '/kyc/page.css']) {
      const response = await fetch(`${off.url}${path}`);
      expect(response.status, path).toBe(404);
      await response.body?.cancel();
    }
  });

  it('serves the page with a CSP that allows the SDK origin and nothing else outside', async () => {
    const response = await fetch(`${production.url}/kyc`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const sdk = new URL(sandbox.sdkScriptUrl).origin;
    expect(response.headers.get('content-security-policy')).toBe(
      `default-src 'none'; script-src 'self' ${sdk}; style-src 'self' ${sdk}; ` +
        `connect-src 'self' ${sdk}; img-src 'self' data:; base-uri 'none'; ` +
        `form-action 'self'; frame-ancestors 'none'`,
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await response.text();
    expect(html).toContain('<script src="/kyc/page.js" defer></script>');
    // No inline script runs: the only inline one is a JSON data block.
    expect(html.match(/<script(?![^>]*(src=|type="application\/json"))/g)).toBeNull();
  });

  it('serves the script and the stylesheet; other methods are 405, other paths 404', async () => {
    const script = await fetch(`${production.url}/kyc/page.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain('kycSdkConfig');
    const css = await fetch(`${production.url}/kyc/page.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    await css.body?.cancel();
    const head = await fetch(`${production.url}/kyc`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const post = await fetch(`${production.url}/kyc`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await post.body?.cancel();
    const other = await fetch(`${production.url}/kyc/admin`);
    expect(other.status).toBe(404);
    await other.body?.cancel();
  });

  it('never serves an upstream credential or the JWT secret', async () => {
    const secrets = [
      sandbox.credentials.kycSecretKey,
      sandbox.credentials.paymentAccessToken,
      TEST_JWT_SECRET,
    ];
    for (const gateway of [demo, production]) {
      for (const path of ['/kyc', '/kyc?userRef=usr_demo_tier1', '/kyc/page.js', '/kyc/page.css']) {
        const response = await fetch(`${gateway.url}${path}`);
        const seen = `${JSON.stringify([...response.headers])}${await response.text()}`;
        for (const secret of secrets) expect(seen.includes(secret), path).toBe(false);
      }
    }
  });
});

describe('where the token comes from', () => {
  it('is not in the page without demo tokens (production): the page asks for #token=', async () => {
    const html = await (await fetch(`${production.url}/kyc?userRef=usr_demo_tier1`)).text();
    expect(pageConfig(html)).toEqual({ mode: 'token' });
  });

  it('is a 30-minute end-user token for the typed userRef in sandbox mode', async () => {
    const html = await (
      await fetch(`${demo.url}/kyc?userRef=usr_page_1&name=Ngozi%20Eze&levelSlug=tier_2`)
    ).text();
    const config = pageConfig(html);
    expect(config).toMatchObject({
      mode: 'demo',
      userRef: 'usr_page_1',
      name: 'Ngozi Eze',
      levelSlug: 'tier_2',
    });
    const token = config.token ?? '';
    const { payload } = await jwtVerify(token, new TextEncoder().encode(TEST_JWT_SECRET));
    expect(payload.sub).toBe('usr_page_1');
    // An end user's token: no scope; the payments it may read are listed in it.
    expect(payload.scope).toBeUndefined();
    expect(config.pendingTxRef).toMatch(/^NT-PENDING[A-Z0-9]+$/);
    expect(payload.txRefs).toEqual(config.txRefs);
    expect(config.txRefs).toEqual(
      expect.arrayContaining(['NT-SUCCESS001', 'NT-FAILED001', config.pendingTxRef]),
    );
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(30 * 60);
    // Without userRef: the sandbox's new demo user.
    const first = pageConfig(await (await fetch(`${demo.url}/kyc`)).text());
    expect(decodeJwt(first.token ?? '').sub).toBe('usr_demo_new');
  });

  it("reads its own KYC and the payments it lists, but no one else's KYC", async () => {
    const config = pageConfig(await (await fetch(`${demo.url}/kyc?userRef=usr_demo_tier1`)).text());
    const token = config.token ?? null;
    const own = await gql(demo, PageKycUserDocument, { userRef: 'usr_demo_tier1' }, token);
    expect(own.data?.kycUser?.level).toBe(1);
    const other = await gql(demo, PageKycUserDocument, { userRef: 'usr_demo_tier3' }, token);
    expect(codesOf(other)).toEqual(['FORBIDDEN']);
    const sdk = await gql(
      demo,
      PageKycSdkConfigDocument,
      { userRef: 'usr_demo_tier1', name: 'Amaka', levelSlug: 'tier_2' },
      token,
    );
    expect(sdk.data?.kycSdkConfig.publicKey).toBe(sandbox.credentials.kycPublicKey);
    const payment = await gql(demo, PagePaymentDocument, { txRef: 'NT-SUCCESS001' }, token);
    expect(payment.data?.transaction?.card?.masked).toBe('411111******1111');
  });

  it('refuses a userRef it cannot put in a token, and escapes what it echoes', async () => {
    const response = await fetch(
      `${demo.url}/kyc?userRef=${encodeURIComponent('</script><script>alert(1)</script>')}&name=${encodeURIComponent('</script><b>')}`,
    );
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('</script><b>');
    const config = pageConfig(html);
    expect(config.token).toBeUndefined();
    expect(config.error).toMatch(/^userRef must be/);
    expect(config.name).toBe('</script><b>');
  });
});

describe('the typed client (src/client)', () => {
  it('runs a query and follows a subscription to its end, from Node', async () => {
    const token = await demo.token({ scope: 'transactions:read' });
    const client = createGatewayClient({ url: `${demo.url}/graphql`, token });
    const result = await client.request(PagePaymentDocument, { txRef: 'NT-FAILED001' });
    expect(result.status).toBe(200);
    expect(result.data?.transaction?.status).toBe('FAILED');

    const txRef = `NT-PENDING${Date.now()}`;
    const statuses: string[] = [];
    for await (const next of client.subscribe(PagePaymentStatusDocument, { txRef })) {
      statuses.push(next.data?.transactionStatus.status ?? 'no data');
    }
    expect(statuses).toEqual(['PENDING', 'SUCCESSFUL']);

    const unauthenticated = createGatewayClient({ url: `${demo.url}/graphql` });
    const refused = await unauthenticated.request(PagePaymentDocument, { txRef: 'NT-FAILED001' });
    expect(refused.status).toBe(401);
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const streams = unauthenticated.subscribe(PagePaymentStatusDocument, { txRef });
    const first = await streams.next();
    expect(first.value).toMatchObject({ status: 401 });
  });

  it('stops the stream when the loop is left early', async () => {
    const token = await demo.token({ scope: 'transactions:read' });
    const client = createGatewayClient({ url: `${demo.url}/graphql`, token });
    const txRef = `NT-PENDINGX${Date.now()}`;
    for await (const next of client.subscribe(PagePaymentStatusDocument, { txRef })) {
      expect(next.data?.transactionStatus.status).toBe('PENDING');
      break;
    }
    // The gateway stops polling for it once the client went away.
    await until(async () => (await metric(demo, 'gateway_live_pollers')) === 0, 3000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const polls = sandbox.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sandbox.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length).toBe(polls);
  });
});
