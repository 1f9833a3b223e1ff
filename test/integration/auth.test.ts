/**
 * Authentication and authorization, through HTTP against the sandbox: every
 * refusal is checked to have made no upstream call.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../sandbox/index.ts';
import {
  KycSdkConfigDocument,
  KycUserDocument,
  RefreshKycUserDocument,
  TransactionDocument,
  VerifyTransactionDocument,
} from '../../src/client/generated/graphql.ts';
import { advanceWallClock } from '../helpers/clock.ts';
import {
  codesOf,
  dataOf,
  type GraphQLResponse,
  gql,
  sandboxUpstreams,
  startGateway,
  startSandboxGateway,
  TEST_JWT_SECRET,
  type TestGateway,
  withoutUpstreamCall as upstreamUntouched,
} from '../helpers/gateway.ts';

let sandbox: Sandbox;
let gateway: TestGateway;
const secret = new TextEncoder().encode(TEST_JWT_SECRET);

let close: () => Promise<void>;
beforeAll(async () => {
  ({ sandbox, gateway, close } = await startSandboxGateway());
});
afterAll(() => close());

const withoutUpstreamCall = <T>(action: () => Promise<T>): Promise<T> =>
  upstreamUntouched(sandbox, action);

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('authentication', () => {
  const refuse = async (token: string | null) => {
    const response = await withoutUpstreamCall(() =>
      gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token),
    );
    expect(response.status).toBe(401);
    expect(codesOf(response)).toEqual(['UNAUTHENTICATED']);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.data ?? null).toBeNull();
    return response;
  };

  it('refuses a request without a token', async () => {
    await refuse(null);
  });

  it('refuses a token with a bad signature', async () => {
    const token = await new SignJWT({ scope: 'transactions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('another-secret-that-is-long-enough-too!'));
    await refuse(token);
  });

  it('refuses an expired token', async () => {
    const token = await new SignJWT({ scope: 'transactions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(secret);
    const response = await refuse(token);
    expect(response.errors?.[0]?.message).toMatch(/expired/);
  });

  it('refuses a token once it expires, even after it was accepted (and remembered)', async () => {
    const token = await new SignJWT({ scope: 'transactions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('short-lived')
      .setExpirationTime(Math.floor(Date.now() / 1000) + 2)
      .sign(secret);
    const first = await gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token);
    expect(first.status).toBe(200);
    advanceWallClock(2100);
    await refuse(token);
  });

  it('refuses alg: none', async () => {
    const token = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({
      sub: 'x',
      scope: 'transactions:read kyc:read',
      exp: Math.floor(Date.now() / 1000) + 300,
    })}.`;
    await refuse(token);
  });

  it('refuses a token that is not yet valid', async () => {
    const token = await new SignJWT({ scope: 'transactions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setNotBefore(Math.floor(Date.now() / 1000) + 600)
      .setExpirationTime('20m')
      .sign(secret);
    await refuse(token);
  });

  it('refuses garbage and a non-Bearer scheme', async () => {
    await refuse('not-a-jwt');
    const response = await gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, null, {
      authorization: `Basic ${Buffer.from('a:b').toString('base64')}`,
    });
    expect(response.status).toBe(401);
  });
});

describe('scopes and ownership', () => {
  it('transactions:read is needed for transactions, and its absence costs no upstream call', async () => {
    const token = await gateway.token({ scope: 'kyc:read' });
    const response = await withoutUpstreamCall(() =>
      gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token),
    );
    expect(response.status).toBe(200);
    expect(codesOf(response)).toEqual(['FORBIDDEN']);
    const verify = await withoutUpstreamCall(() =>
      gql(gateway, VerifyTransactionDocument, { txRef: 'NT-SUCCESS001' }, token),
    );
    expect(codesOf(verify)).toEqual(['FORBIDDEN']);
  });

  it('an end user (no scope claim) reads only their own KYC', async () => {
    const token = await gateway.token({ sub: 'usr_demo_tier1', scope: null });
    const own = dataOf(await gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier1' }, token));
    expect(own.kycUser?.userRef).toBe('usr_demo_tier1');
    dataOf(await gql(gateway, RefreshKycUserDocument, { userRef: 'usr_demo_tier1' }, token));
    dataOf(
      await gql(
        gateway,
        KycSdkConfigDocument,
        { userRef: 'usr_demo_tier1', name: 'A', levelSlug: 'tier_2' },
        token,
      ),
    );
    const others: Array<() => Promise<GraphQLResponse<unknown>>> = [
      () => gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier3' }, token),
      () => gql(gateway, RefreshKycUserDocument, { userRef: 'usr_demo_tier3' }, token),
    ];
    for (const ask of others) {
      expect(codesOf(await withoutUpstreamCall(ask))).toEqual(['FORBIDDEN']);
    }
    const transaction = await withoutUpstreamCall(() =>
      gql(gateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token),
    );
    expect(codesOf(transaction)).toEqual(['FORBIDDEN']);
  });

  it('a cached record is never served to a caller who may not read it', async () => {
    const merchant = await gateway.token();
    dataOf(await gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier3' }, merchant));
    const endUser = await gateway.token({ sub: 'usr_demo_new', scope: null });
    const response = await gql(gateway, KycUserDocument, { userRef: 'usr_demo_tier3' }, endUser);
    expect(codesOf(response)).toEqual(['FORBIDDEN']);
    expect(JSON.stringify(response)).not.toContain('tier_3');
  });

  it('the ownership rule holds through aliases and variables in one document', async () => {
    const token = await gateway.token({ sub: 'usr_demo_new', scope: 'transactions:read' });
    const refused = await withoutUpstreamCall(() =>
      gql(
        gateway,
        `query($other: ID!) {
        a: kycUser(userRef: "usr_demo_tier3") { userRef }
        b: kycUser(userRef: $other) { userRef }
      }`,
        { other: 'usr_demo_tier1' },
        token,
      ),
    );
    expect(codesOf(refused)).toEqual(['FORBIDDEN', 'FORBIDDEN']);
    expect(refused.data).toEqual({ a: null, b: null });
  });
});

describe('issuer and audience', () => {
  it('checks AUTH_ISSUER and AUTH_AUDIENCE when set', async () => {
    const strict = await startGateway(sandboxUpstreams(sandbox), {
      AUTH_ISSUER: 'https://issuer.example',
      AUTH_AUDIENCE: 'payment-gateway',
    });
    try {
      const sign = (iss: string, aud: string) =>
        new SignJWT({ scope: 'transactions:read' })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject('m')
          .setIssuer(iss)
          .setAudience(aud)
          .setExpirationTime('5m')
          .sign(secret);
      const good = await gql(
        strict,
        TransactionDocument,
        { txRef: 'NT-SUCCESS001' },
        await sign('https://issuer.example', 'payment-gateway'),
      );
      expect(dataOf(good).transaction?.status).toBe('SUCCESSFUL');
      for (const token of [
        await sign('https://evil.example', 'payment-gateway'),
        await sign('https://issuer.example', 'other-api'),
      ]) {
        const response = await gql(strict, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token);
        expect(response.status).toBe(401);
      }
    } finally {
      await strict.close();
    }
  });
});

describe('JWKS (RS256/ES256)', () => {
  it('accepts RS256 and ES256 tokens from the key set and refuses algorithm confusion', async () => {
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const ec = await generateKeyPair('ES256', { extractable: true });
    const keys = [
      { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
    ];
    const jwksServer = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys }));
    });
    jwksServer.listen(0, '127.0.0.1');
    await once(jwksServer, 'listening');
    const { port } = jwksServer.address() as AddressInfo;
    const jwksGateway = await startGateway(sandboxUpstreams(sandbox), {
      AUTH_JWT_SECRET: '',
      AUTH_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    });
    try {
      const ask = (token: string) =>
        gql(jwksGateway, TransactionDocument, { txRef: 'NT-SUCCESS001' }, token);
      const rsToken = await new SignJWT({ scope: 'transactions:read' })
        .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
        .setSubject('m')
        .setExpirationTime('5m')
        .sign(rsa.privateKey);
      expect(dataOf(await ask(rsToken)).transaction?.status).toBe('SUCCESSFUL');
      const esToken = await new SignJWT({ scope: 'transactions:read' })
        .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
        .setSubject('m')
        .setExpirationTime('5m')
        .sign(ec.privateKey);
      expect(dataOf(await ask(esToken)).transaction?.status).toBe('SUCCESSFUL');
      // HS256 keyed with the public key's bytes: the classic confusion attack.
      const publicPem = JSON.stringify(keys[0]);
      const confused = await new SignJWT({ scope: 'transactions:read' })
        .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
        .setSubject('m')
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(publicPem));
      expect((await ask(confused)).status).toBe(401);
      const hsWithTestSecret = await gateway.token();
      expect((await ask(hsWithTestSecret)).status).toBe(401);
    } finally {
      await jwksGateway.close();
      jwksServer.closeAllConnections();
      jwksServer.close();
    }
  });
});

describe('AUTH_DISABLED', () => {
  it('lets every request through when checking is turned off', async () => {
    const open = await startGateway(sandboxUpstreams(sandbox), {
      AUTH_JWT_SECRET: '',
      AUTH_DISABLED: 'true',
    });
    try {
      const response = await gql(open, TransactionDocument, { txRef: 'NT-SUCCESS001' }, null);
      expect(dataOf(response).transaction?.status).toBe('SUCCESSFUL');
    } finally {
      await open.close();
    }
  });
});
