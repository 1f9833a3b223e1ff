/**
 * End users and other customers' payments, through HTTP against the sandbox: a token without
 * `transactions:read` reads only the payments listed in its `txRefs` claim (`transaction`,
 * `transactions` entry by entry, `transactionStatus`), never `verifyTransaction`; every refusal
 * is checked to have made no upstream call. The /kyc page's demo token is one of these.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import {
  createGatewayClient,
  KycUserDocument,
  PagePaymentStatusDocument,
  TransactionDocument,
  TransactionsDocument,
  VerifyTransactionDocument,
} from '../../src/client/index.ts';
import {
  codesOf,
  dataOf,
  gql,
  sandboxUpstreams,
  startGateway,
  TEST_JWT_SECRET,
  type TestGateway,
  withoutUpstreamCall as upstreamUntouched,
} from '../helpers/gateway.ts';

let sandbox: Sandbox;
/** A gateway that also serves the /kyc page with demo tokens (sandbox mode as `npm start`). */
let gateway: TestGateway;

beforeAll(async () => {
  sandbox = await startSandbox({ pendingSeconds: 1 });
  gateway = await startGateway(
    sandboxUpstreams(sandbox),
    { KYC_PAGE: 'true', LIVE_POLL_MS: '200' },
    { kycPageDemoSecret: TEST_JWT_SECRET },
  );
});
afterAll(async () => {
  await gateway.close();
  await sandbox.close();
});

const withoutUpstreamCall = <T>(action: () => Promise<T>): Promise<T> =>
  upstreamUntouched(sandbox, action);

let counter = 0;
/**
 * A reference no test has read yet (nothing cached): the sandbox answers `NT-GEN…` with a
 * SUCCESSFUL record holding a customer's name, e-mail, phone and card digits.
 */
function freshRef(prefix = 'NT-GEN'): string {
  counter += 1;
  return `${prefix}${Date.now()}X${counter}`;
}

/** Upstream calls made for one reference. */
function callsFor(txRef: string): number {
  return sandbox.requests.filter((r) => r.path.endsWith(`/${txRef}`)).length;
}

/** An end user's token (no scope claim) with the given `txRefs` claim (none when undefined). */
function endUser(txRefs?: unknown, sub = 'usr_demo_tier1'): Promise<string> {
  return gateway.token({ sub, scope: null, ...(txRefs !== undefined && { txRefs }) });
}

/** Every result of a `transactionStatus` stream, until the server ends it. */
async function watch(txRef: string, token: string) {
  const client = createGatewayClient({ url: `${gateway.url}/graphql`, token });
  const results = [];
  for await (const result of client.subscribe(
    PagePaymentStatusDocument,
    { txRef },
    { signal: AbortSignal.timeout(10_000) },
  )) {
    results.push(result);
  }
  return results;
}

describe('an end-user token (no transactions:read)', () => {
  it('without a txRefs claim reads no payment, and asking costs no upstream call', async () => {
    const txRef = freshRef();
    const response = await withoutUpstreamCall(async () =>
      gql(gateway, TransactionDocument, { txRef }, await endUser()),
    );
    expect(response.status).toBe(200);
    expect(codesOf(response)).toEqual(['FORBIDDEN']);
    expect(response.data).toEqual({ transaction: null });
  });

  it('reads the payments listed in its txRefs claim, and no other', async () => {
    const [a, b] = [freshRef(), freshRef()];
    const token = await endUser([a]);
    const own = dataOf(await gql(gateway, TransactionDocument, { txRef: a }, token));
    expect(own.transaction).toMatchObject({ txRef: a, status: 'SUCCESSFUL' });
    expect(own.transaction?.customer?.email).toMatch(/@example\.com$/);
    const other = await withoutUpstreamCall(() =>
      gql(gateway, TransactionDocument, { txRef: b }, token),
    );
    expect(codesOf(other)).toEqual(['FORBIDDEN']);
    expect(other.data).toEqual({ transaction: null });
    expect(callsFor(b)).toBe(0);
  });

  it('transactions: FORBIDDEN only at the positions not in the claim, one upstream call', async () => {
    const [a, b] = [freshRef(), freshRef()];
    const token = await endUser([a]);
    const response = await gql(gateway, TransactionsDocument, { txRefs: [a, b, a] }, token);
    expect(response.status).toBe(200);
    expect(response.data?.transactions.map((tx) => tx?.txRef ?? null)).toEqual([a, null, a]);
    expect(response.errors?.map((e) => [e.extensions?.code, e.path])).toEqual([
      ['FORBIDDEN', ['transactions', 1]],
    ]);
    expect(callsFor(a)).toBe(1);
    expect(callsFor(b)).toBe(0);
  });

  it('verifyTransaction needs transactions:read, even for a reference in the claim', async () => {
    const txRef = freshRef();
    const token = await endUser([txRef]);
    const response = await withoutUpstreamCall(() =>
      gql(gateway, VerifyTransactionDocument, { txRef }, token),
    );
    expect(codesOf(response)).toEqual(['FORBIDDEN']);
    expect(response.data).toEqual({ verifyTransaction: null });
  });

  it('transactionStatus over SSE: refused outside the claim, followed live inside it', async () => {
    const listed = freshRef('NT-PENDING');
    const other = freshRef('NT-PENDING');
    const token = await endUser([listed]);
    const refused = await withoutUpstreamCall(() => watch(other, token));
    expect(refused).toHaveLength(1);
    expect(refused[0]?.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    expect(refused[0]?.data ?? null).toBeNull();
    expect(callsFor(other)).toBe(0);

    const followed = await watch(listed, token);
    expect(followed.map((r) => r.errors ?? r.data?.transactionStatus.status)).toEqual([
      'PENDING',
      'SUCCESSFUL',
    ]);
  });

  it('ignores a claim that is not an array, and entries that are not references', async () => {
    const a = freshRef();
    const notArray = await endUser(a);
    expect(
      codesOf(
        await withoutUpstreamCall(() => gql(gateway, TransactionDocument, { txRef: a }, notArray)),
      ),
    ).toEqual(['FORBIDDEN']);
    // Junk around one good reference: only the good one counts, and the token still works.
    const junk = await endUser([42, null, { txRef: a }, [a], `${a} `, 'nt-gen1', a]);
    expect(
      dataOf(await gql(gateway, TransactionDocument, { txRef: a }, junk)).transaction?.txRef,
    ).toBe(a);
  });

  it('keeps at most 100 references of a longer claim', async () => {
    const refs = Array.from({ length: 150 }, () => freshRef());
    const token = await endUser(refs);
    const first = refs[0] ?? '';
    const last = refs[149] ?? '';
    expect(
      dataOf(await gql(gateway, TransactionDocument, { txRef: first }, token)).transaction,
    ).toMatchObject({ txRef: first });
    const beyond = await withoutUpstreamCall(() =>
      gql(gateway, TransactionDocument, { txRef: last }, token),
    );
    expect(codesOf(beyond)).toEqual(['FORBIDDEN']);
  });

  it('never gets an answer kept for another token of the same user with a different claim', async () => {
    const txRef = freshRef();
    const listing = await endUser([txRef], 'usr_same');
    const notListing = await endUser(undefined, 'usr_same');
    const first = dataOf(await gql(gateway, TransactionDocument, { txRef }, listing));
    expect(first.transaction?.txRef).toBe(txRef);
    // The same document and variables, the same sub and scopes: only the claim differs.
    const again = await gql(gateway, TransactionDocument, { txRef }, notListing);
    expect(codesOf(again)).toEqual(['FORBIDDEN']);
    expect(JSON.stringify(again)).not.toContain('@example.com');
  });
});

describe('a service token (transactions:read)', () => {
  it('still reads any payment, with or without a txRefs claim', async () => {
    const [a, b] = [freshRef(), freshRef()];
    for (const token of [
      await gateway.token({ scope: 'transactions:read' }),
      await gateway.token({ scope: 'transactions:read', txRefs: [a] }),
    ]) {
      expect(
        dataOf(await gql(gateway, TransactionDocument, { txRef: b }, token)).transaction,
      ).toMatchObject({ txRef: b, status: 'SUCCESSFUL' });
      const both = dataOf(await gql(gateway, TransactionsDocument, { txRefs: [a, b] }, token));
      expect(both.transactions.map((tx) => tx?.txRef)).toEqual([a, b]);
      const verified = dataOf(await gql(gateway, VerifyTransactionDocument, { txRef: b }, token));
      expect(verified.verifyTransaction?.txRef).toBe(b);
    }
  });
});

describe("the /kyc page's demo token", () => {
  /** The page's config for a demo userRef, and the claims of the token in it. */
  async function demoPage(userRef: string) {
    const response = await fetch(`${gateway.url}/kyc?userRef=${encodeURIComponent(userRef)}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    const match = /<script type="application\/json" id="kyc-page-config">(.*?)<\/script>/s.exec(
      html,
    );
    const config = JSON.parse(match?.[1] ?? '{}') as {
      token?: string;
      txRefs?: string[];
      pendingTxRef?: string;
    };
    const token = config.token ?? '';
    return { config, token, claims: decodeJwt(token) };
  }

  it('carries no scope: its own KYC and the payments it lists, nothing else', async () => {
    const { config, token, claims } = await demoPage('usr_demo_tier1');
    expect(claims.sub).toBe('usr_demo_tier1');
    expect(claims.scope).toBeUndefined();
    const pending = config.pendingTxRef ?? '';
    expect(pending).toMatch(/^NT-PENDING[A-Z0-9]+$/);
    expect(claims.txRefs).toEqual(config.txRefs);
    expect(claims.txRefs).toEqual(expect.arrayContaining(['NT-SUCCESS001', pending]));
    // A new reference for each page load.
    expect((await demoPage('usr_demo_tier1')).config.pendingTxRef).not.toBe(pending);

    const suggested = dataOf(await gql(gateway, TransactionDocument, { txRef: pending }, token));
    expect(suggested.transaction).toMatchObject({ txRef: pending, status: 'PENDING' });
    const outside = freshRef();
    const refused = await withoutUpstreamCall(() =>
      gql(gateway, TransactionDocument, { txRef: outside }, token),
    );
    expect(codesOf(refused)).toEqual(['FORBIDDEN']);

    const own = dataOf(await gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier1' }, token));
    expect(own.kycUser?.userRef).toBe('usr_demo_tier1');
    const other = await withoutUpstreamCall(() =>
      gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier3' }, token),
    );
    expect(codesOf(other)).toEqual(['FORBIDDEN']);
  });

  it('is never signed in production, even with a demo secret handed in', async () => {
    const production = await startGateway(
      sandboxUpstreams(sandbox),
      { KYC_PAGE: 'true', NODE_ENV: 'production' },
      { kycPageDemoSecret: TEST_JWT_SECRET },
    );
    try {
      const html = await (await fetch(`${production.url}/kyc?userRef=usr_demo_tier1`)).text();
      expect(html).toContain(
        '<script type="application/json" id="kyc-page-config">{"mode":"token"}',
      );
    } finally {
      await production.close();
    }
  });
});
