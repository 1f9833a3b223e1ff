/**
 * `SIGHUP` reloads the businesses file of a running `node src/main.ts` (as `npm start` runs it),
 * in front of a real sandbox serving businesses A, B and C: with A and B served and a stream of
 * each open, a file without B and with C is applied — B's streams end with UNAUTHENTICATED and
 * its tokens are refused, A's stream goes on and keeps receiving, C is served; a broken file
 * changes nothing and is logged without a value; a changed credential is used by the next call.
 */
import { writeFileSync } from 'node:fs';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import {
  type BusinessEntry,
  businessesFolder,
  sandboxBusinessEntry,
  webhookSecretOf,
  writeBusinessesFile,
} from '../helpers/businesses.ts';
import { until } from '../helpers/eventually.ts';
import {
  type Followed,
  follow,
  type GatewayProcess,
  query,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { scaled } from '../helpers/timeouts.ts';
import { runOver } from '../helpers/transports.ts';
import { postWebhook } from '../helpers/webhook-signature.ts';

const A = 'shop-a';
const B = 'shop-b';
const C = 'shop-c';
const PENDING_SECONDS = 60;

let sandbox: Sandbox;
let offset = 0;
const folder = businessesFolder();
let file: string;
let gateway: GatewayProcess;

/** Every secret the files of this test hold: none may ever be printed. */
function secrets(): string[] {
  return (sandbox.businesses ?? []).flatMap((business) => [
    business.credentials.paymentAccessToken,
    business.credentials.kycSecretKey,
    webhookSecretOf(business.id),
  ]);
}

/** The entry of `id`; C's without a webhook secret (its webhook paths answer 404). */
function entryOf(id: string): BusinessEntry {
  const entry = sandboxBusinessEntry(sandbox, id);
  if (id === C) delete entry.webhookSecret;
  return entry;
}

beforeAll(async () => {
  sandbox = await startSandbox({
    businesses: [{ id: A }, { id: B }, { id: C }],
    pendingSeconds: PENDING_SECONDS,
    now: () => Date.now() + offset,
  });
  file = writeBusinessesFile(folder.path(), [entryOf(A), entryOf(B)]);
  gateway = await spawnGateway(
    { paymentUrl: sandbox.paymentUrl, kycUrl: sandbox.kycUrl },
    { BUSINESSES_FILE: file, LOG_LEVEL: 'info', LIVE_POLL_MS: '300' },
  );
}, scaled(30_000));
afterAll(async () => {
  await stopAllGateways();
  await sandbox?.close();
  folder.remove();
});

const token = (biz: string, sub = 'svc-reload') =>
  testToken(sub, 'transactions:read kyc:read', { biz });
const TX = (txRef: string) => `{ transaction(txRef: "${txRef}") { txRef status merchantRef } }`;

/** Sends SIGHUP and waits for the log line that says it was handled (the `n`th such line). */
async function reload(says: RegExp): Promise<string> {
  const seen = gateway.output().match(new RegExp(says, 'g'))?.length ?? 0;
  process.kill(gateway.pid, 'SIGHUP');
  await until(() => (gateway.output().match(new RegExp(says, 'g'))?.length ?? 0) > seen, 10_000);
  return gateway.output();
}

function paymentBearers(txRef: string): string[] {
  return sandbox.requests
    .filter((request) => request.service === 'payment' && request.path.endsWith(`/${txRef}`))
    .map((request) => request.headers.authorization ?? '');
}

describe('SIGHUP reloads the businesses file', () => {
  const txRef = `NT-PENDING${process.pid}reload`;
  let followA: Followed;
  let followB: Followed;

  it('removes B (its streams end with UNAUTHENTICATED, its tokens 401), adds C, and leaves A’s stream open', async () => {
    const [tokenA, tokenB, tokenC] = await Promise.all([token(A), token(B), token(C)]);
    expect((await query(gateway, TX('NT-SUCCESS001'), tokenC)).status).toBe(401);
    followA = follow(gateway, txRef, tokenA);
    followB = follow(gateway, txRef, tokenB);
    // B's second stream over WebSocket, with graphql-ws's own client.
    const socket = createWsClient({
      url: `${gateway.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${tokenB}` },
      retryAttempts: 0,
    });
    const socketB: { results: unknown[]; end?: unknown } = { results: [] };
    socket.subscribe(
      {
        query: 'subscription($t: ID!) { transactionStatus(txRef: $t) { status } }',
        variables: { t: txRef },
      },
      {
        next: (result) => socketB.results.push(result),
        error: (error) => {
          socketB.end = error instanceof Error ? error.message : (error ?? 'error');
        },
        complete: () => {
          socketB.end ??= 'complete';
        },
      },
    );
    await Promise.all([followA.first, followB.first]);
    await until(() => socketB.results.length > 0, 5000);
    expect(followA.statuses).toEqual(['PENDING']);

    writeBusinessesFile(file, [entryOf(A), entryOf(C)]);
    const output = await reload(/SIGHUP: businesses reloaded/);
    expect(output).toMatch(/"added":\["shop-c"\]/);
    expect(output).toMatch(/"removed":\["shop-b"\]/);

    // B's streams end, each with a last UNAUTHENTICATED error.
    let endedB = false;
    void followB.done.then(() => {
      endedB = true;
    });
    await until(() => endedB, 10_000);
    expect(JSON.stringify(followB.errors)).toContain('UNAUTHENTICATED');
    await until(() => socketB.end !== undefined, 10_000);
    expect(JSON.stringify([socketB.results.at(-1), socketB.end])).toContain('UNAUTHENTICATED');
    await socket.dispose();
    // B's new requests: 401 (WebSocket 4403), no upstream call (A's stream polls meanwhile).
    const fresh = `NT-GEN${process.pid}b`;
    expect((await query(gateway, TX(fresh), tokenB)).status).toBe(401);
    const socketAgain = await runOver(
      'WebSocket',
      gateway.url,
      { query: TX(fresh) },
      {
        token: tokenB,
      },
    );
    expect(socketAgain.close).toBe(4403);
    expect(paymentBearers(fresh)).toEqual([]);
    // C is served, with its own data; it has no webhook secret: its paths 404.
    const servedC = await query(gateway, TX('NT-SUCCESS001'), tokenC);
    expect(servedC.status).toBe(200);
    expect(JSON.stringify(servedC.body.data)).toContain('ORDER-1001-SHOP-C');
    const body = JSON.stringify({ id: 'evt_c', data: { txRef } });
    expect(
      (await postWebhook(gateway.url, `/webhooks/payment/${C}`, body, ['x'.repeat(32)])).status,
    ).toBe(404);
    expect(
      (await postWebhook(gateway.url, `/webhooks/payment/${B}`, body, [webhookSecretOf(B)])).status,
    ).toBe(404);

    // A's stream was not touched: still open, and it keeps receiving (A's payment settles).
    expect(followA.completed).toBe(false);
    expect(followA.errors).toEqual([]);
    offset += PENDING_SECONDS * 1000 + 1000;
    expect(
      (
        await postWebhook(
          gateway.url,
          `/webhooks/payment/${A}`,
          JSON.stringify({ id: 'evt_a', data: { txRef } }),
          [webhookSecretOf(A)],
        )
      ).status,
    ).toBe(202);
    await until(() => followA.completed, 10_000);
    expect(followA.statuses).toEqual(['PENDING', 'SUCCESSFUL']);
    expect(followA.errors).toEqual([]);
  });

  it('a broken file changes nothing and is logged naming the file, business and field, without a value', async () => {
    const [tokenA, tokenB, tokenC] = await Promise.all([token(A), token(B), token(C)]);
    const broken: Array<[string, RegExp]> = [
      [
        // Not JSON, holding B's secrets.
        `{"businesses":[${JSON.stringify(entryOf(B))}`,
        /not JSON/,
      ],
      [
        JSON.stringify({
          businesses: [
            entryOf(A),
            entryOf(B),
            { ...entryOf(C), kycSecretKey: { env: 'SHOP_C_UNSET' } },
          ],
        }),
        /business \\?"shop-c\\?", field \\?"kycSecretKey\\?".*SHOP_C_UNSET/,
      ],
      [
        JSON.stringify({ businesses: [entryOf(A), entryOf(A)] }),
        /business \\?"shop-a\\?", field \\?"id\\?"/,
      ],
    ];
    for (const [text, logged] of broken) {
      writeFileSync(file, text);
      const output = await reload(/SIGHUP: the businesses file was not applied/);
      const line =
        output
          .split('\n')
          .filter((l) => l.includes('was not applied'))
          .at(-1) ?? '';
      expect(line).toMatch(logged);
      expect(line).toContain(file);
      // Still A and C, not B.
      expect((await query(gateway, TX('NT-SUCCESS001'), tokenA)).status).toBe(200);
      expect((await query(gateway, TX('NT-SUCCESS001'), tokenC)).status).toBe(200);
      expect((await query(gateway, TX('NT-SUCCESS001'), tokenB)).status).toBe(401);
    }
    for (const secret of secrets()) expect(gateway.output()).not.toContain(secret);
  });

  it("a changed credential of A is used by A's next upstream call", async () => {
    const tokenA = await token(A);
    const rotated = 'rotated-payment-token-0123456789';
    writeBusinessesFile(file, [{ ...entryOf(A), paymentAccessToken: rotated }, entryOf(C)]);
    const output = await reload(/SIGHUP: businesses reloaded/);
    expect(
      output
        .split('\n')
        .filter((l) => l.includes('businesses reloaded'))
        .at(-1),
    ).toMatch(/"changed":\["shop-a"\]/);
    // The sandbox does not know the new token: the call is refused upstream, and it was made with it.
    const first = `NT-GEN${process.pid}1`;
    const refused = await query(gateway, TX(first), tokenA);
    expect(JSON.stringify(refused.body.errors)).toMatch(/UPSTREAM/);
    expect(paymentBearers(first)).toContain(`Bearer ${rotated}`);
    // Back to the credential the sandbox knows: served again.
    writeBusinessesFile(file, [entryOf(A), entryOf(C)]);
    await reload(/SIGHUP: businesses reloaded/);
    const second = `NT-GEN${process.pid}2`;
    const served = await query(gateway, TX(second), tokenA);
    expect(served.status).toBe(200);
    expect(JSON.stringify(served.body.data)).toContain(`ORDER-GEN${process.pid}2"`);
    expect(paymentBearers(second)).toEqual([`Bearer ${entryOf(A).paymentAccessToken}`]);
    for (const secret of [...secrets(), rotated]) expect(gateway.output()).not.toContain(secret);
  });
});
