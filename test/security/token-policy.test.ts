/**
 * What a token must carry, through HTTP against the sandbox: `exp` always, `iat` not more than
 * a minute ahead, `scope` as a string or an array of strings. And the memory the remembered
 * (verified) tokens may take, through the real authenticator with large signed tokens.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../sandbox/index.ts';
import {
  createAuthenticator,
  createVerifiedTokenCache,
  VERIFIED_TOKENS_MAX_BYTES,
} from '../../src/auth.ts';
import { KycUserDocument, TransactionDocument } from '../../src/client/index.ts';
import {
  codesOf,
  dataOf,
  gql,
  startSandboxGateway,
  TEST_JWT_SECRET,
  type TestGateway,
  withoutUpstreamCall,
} from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
const secret = new TextEncoder().encode(TEST_JWT_SECRET);
const now = (): number => Math.floor(Date.now() / 1000);

let close: () => Promise<void>;
beforeAll(async () => {
  ({ sandbox, gateway, close } = await startSandboxGateway());
});
afterAll(() => close());

/** Asks for a payment with `token`, which must be refused as a missing or expired one is. */
async function expectRefused(token: string): Promise<void> {
  const response = await withoutUpstreamCall(sandbox, () =>
    gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token),
  );
  expect(response.status).toBe(401);
  expect(codesOf(response)).toEqual(['UNAUTHENTICATED']);
  expect(response.headers.get('www-authenticate')).toBe('Bearer');
  expect(response.data ?? null).toBeNull();
}

describe('exp and iat', () => {
  it('refuses a validly signed token without exp', async () => {
    const token = await new SignJWT({ scope: 'transactions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('no-expiry')
      .setIssuedAt()
      .sign(secret);
    await expectRefused(token);
    // Twice: a refusal is not remembered as a success either.
    await expectRefused(token);
  });

  it('refuses a token issued 5 minutes in the future', async () => {
    const token = await new SignJWT({ scope: 'transactions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('future')
      .setIssuedAt(now() + 300)
      .setExpirationTime(now() + 900)
      .sign(secret);
    await expectRefused(token);
  });

  it('accepts a token issued 30 s in the future (clock skew)', async () => {
    const token = await new SignJWT({ scope: 'transactions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('skewed')
      .setIssuedAt(now() + 30)
      .setExpirationTime(now() + 600)
      .sign(secret);
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token);
    expect(dataOf(response).transaction?.status).toBe('SUCCESSFUL');
  });
});

describe('scope', () => {
  it('an array element holding several space-separated scopes grants each', async () => {
    const token = await gateway.token({ scope: ['kyc:read transactions:read'] });
    const payment = await gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token);
    expect(dataOf(payment).transaction?.status).toBe('SUCCESSFUL');
    // Another user's KYC: only kyc:read allows it (the token's sub is not that user).
    const kyc = await gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier3' }, token);
    expect(dataOf(kyc).kycUser?.userRef).toBe('usr_demo_tier3');
  });

  it('ignores non-string entries of an array, and keeps the others', async () => {
    const token = await gateway.token({
      scope: [7, null, { scope: 'kyc:read' }, ['kyc:read'], 'transactions:read'],
    });
    const payment = await gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token);
    expect(dataOf(payment).transaction?.status).toBe('SUCCESSFUL');
    const kyc = await withoutUpstreamCall(sandbox, () =>
      gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier3' }, token),
    );
    expect(codesOf(kyc)).toEqual(['FORBIDDEN']);
  });
});

describe('remembered tokens', () => {
  it('stay within the byte bound however large the tokens are', async () => {
    const verified = createVerifiedTokenCache();
    const authenticate = createAuthenticator({ mode: 'jwt', jwtSecret: TEST_JWT_SECRET }, verified);
    // About 15 KB each (a request header holds up to 16 KB): 700 of them are about 10 MB of
    // text, more than the bound once counted as the UTF-16 strings they are in memory.
    const padding = 'x'.repeat(11_000);
    const count = 700;
    let last = '';
    for (let i = 0; i < count; i += 1) {
      last = await new SignJWT({ scope: 'transactions:read', padding })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(`large-${i}`)
        .setExpirationTime('5m')
        .sign(secret);
      const viewer = await authenticate(`Bearer ${last}`);
      expect(viewer.subject).toBe(`large-${i}`);
    }
    expect(verified.calculatedSize).toBeGreaterThan(VERIFIED_TOKENS_MAX_BYTES / 2);
    expect(verified.calculatedSize).toBeLessThanOrEqual(VERIFIED_TOKENS_MAX_BYTES);
    // Fewer kept than verified: the byte bound, not the entry bound, evicted the oldest.
    expect(verified.size).toBeLessThan(count);
    expect(verified.has(last)).toBe(true);
  });
});
