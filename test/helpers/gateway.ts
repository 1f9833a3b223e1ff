/**
 * Starts a real gateway on 127.0.0.1 (through the same config and composition code as
 * `npm start`) against given upstreams, and talks to it over HTTP with typed documents.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type GraphQLFormattedError, print } from 'graphql';
import { SignJWT } from 'jose';
import { expect } from 'vitest';
import {
  demoPayments,
  type Sandbox,
  type SandboxOptions,
  startSandbox,
} from '../../sandbox/index.ts';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { SettingsEnv } from '../../src/settings.ts';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256!';
export const PAYMENT_TOKEN = 'payment-token-SECRET-0123456789';
export const KYC_SECRET = 'kyc-secret-SECRET-0123456789';
export const KYC_PUBLIC = 'pk_test_public_key';
export const KYC_SLUG = 'test-business';

export interface Upstreams {
  paymentUrl: string;
  kycUrl: string;
  paymentAccessToken?: string;
  kycSecretKey?: string;
  kycPublicKey?: string;
  kycBusinessSlug?: string;
  sdkScriptUrl?: string;
}

export interface TestGateway {
  url: string;
  /** An HS256 token for the test secret. Default: every scope. */
  token(claims?: {
    /** `null`: no `sub` claim. */
    sub?: string | null;
    /** `null`: no scope claim (an end user); an array is sent as is. */
    scope?: string | unknown[] | null;
    /** The `txRefs` claim, sent as given (malformed values too); absent when undefined. */
    txRefs?: unknown;
    expiresIn?: string | number;
    /** The business claim (`biz`), sent as given; absent when undefined. */
    biz?: unknown;
  }): Promise<string>;
  /** The shutdown's first step: answers under way and new ones close their connection. */
  drain(): void;
  close(): Promise<void>;
}

/** The upstream settings of a running sandbox. */
export function sandboxUpstreams(sandbox: Sandbox): Upstreams {
  return {
    paymentUrl: sandbox.paymentUrl,
    kycUrl: sandbox.kycUrl,
    paymentAccessToken: sandbox.credentials.paymentAccessToken,
    kycSecretKey: sandbox.credentials.kycSecretKey,
    kycPublicKey: sandbox.credentials.kycPublicKey,
    kycBusinessSlug: sandbox.credentials.kycBusinessSlug,
    sdkScriptUrl: sandbox.sdkScriptUrl,
  };
}

/**
 * Starts a gateway against `upstreams`, with extra environment settings and composition inputs
 * (e.g. `kycPageDemoSecret`: the /kyc page signs demo tokens with it, listing the sandbox's demo
 * payments).
 */
export async function startGateway(
  upstreams: Upstreams,
  env: SettingsEnv = {},
  options: {
    logLines?: string[];
    kycPageDemoSecret?: string;
    /**
     * A file of businesses (`BUSINESSES_FILE`, see ./businesses.ts): the gateway serves them
     * instead of one business from `upstreams`' credentials.
     */
    businessesFile?: string;
  } = {},
): Promise<TestGateway> {
  const single = {
    PAYMENT_ACCESS_TOKEN: upstreams.paymentAccessToken ?? PAYMENT_TOKEN,
    KYC_SECRET_KEY: upstreams.kycSecretKey ?? KYC_SECRET,
    KYC_PUBLIC_KEY: upstreams.kycPublicKey ?? KYC_PUBLIC,
    KYC_BUSINESS_SLUG: upstreams.kycBusinessSlug ?? KYC_SLUG,
  };
  const config = loadConfig({
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    PAYMENT_API_URL: upstreams.paymentUrl,
    KYC_API_URL: upstreams.kycUrl,
    ...(options.businessesFile === undefined
      ? single
      : { BUSINESSES_FILE: options.businessesFile }),
    KYC_SDK_SCRIPT_URL: upstreams.sdkScriptUrl ?? `${upstreams.kycUrl}/sdk/kyc.js`,
    RATE_LIMIT_RPS: '0',
    SERVICE_RATE_LIMIT_RPS: '0',
    LOG_LEVEL: options.logLines ? 'debug' : 'silent',
    ...env,
  });
  if (!config.payment || !config.kyc || !config.auth) throw new Error('test config incomplete');
  const { logLines } = options;
  const logger = logLines
    ? createLogger(
        config.log,
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
            done();
          },
        }),
      )
    : undefined;
  const gateway = createApp({
    config,
    payment: config.payment,
    kyc: config.kyc,
    auth: config.auth,
    ...(config.businesses && { businesses: config.businesses.accounts }),
    ...(logger && { logger }),
    ...(options.kycPageDemoSecret !== undefined && {
      kycPageDemo: { secret: options.kycPageDemoSecret, ...demoPayments },
    }),
  });
  const server = gateway.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token: (claims = {}) => {
      const scope = claims.scope === undefined ? 'transactions:read kyc:read' : claims.scope;
      const signer = new SignJWT({
        ...(scope !== null && { scope }),
        ...(claims.txRefs !== undefined && { txRefs: claims.txRefs }),
        ...(claims.biz !== undefined && { biz: claims.biz }),
      }).setProtectedHeader({ alg: 'HS256' });
      if (claims.sub !== null) signer.setSubject(claims.sub ?? 'test-merchant');
      return signer
        .setIssuedAt()
        .setExpirationTime(claims.expiresIn ?? '5m')
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    },
    drain: () => gateway.drain(),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await gateway.close();
    },
  };
}

export interface GraphQLResponse<TData> {
  status: number;
  headers: Headers;
  data?: TData | null;
  errors?: GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
}

/** Posts an operation to the gateway; `token: null` sends no Authorization header. */
export async function gql<TData, TVariables>(
  gateway: Pick<TestGateway, 'url'>,
  document: TypedDocumentNode<TData, TVariables> | string,
  variables: TVariables | undefined,
  token: string | null,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse<TData>> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(token !== null && { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: JSON.stringify({
      query: typeof document === 'string' ? document : print(document),
      variables,
    }),
  });
  const body = (await response.json()) as Omit<GraphQLResponse<TData>, 'status' | 'headers'>;
  return { status: response.status, headers: response.headers, ...body };
}

/** The data of a response that must have no errors (fails the test with the errors otherwise). */
export function dataOf<TData>(response: GraphQLResponse<TData>): TData {
  expect(response.errors, JSON.stringify(response.errors)).toBeUndefined();
  expect(response.status).toBe(200);
  if (response.data === undefined || response.data === null) throw new Error('no data');
  return response.data;
}

/** The `extensions.code` of each error, in order. */
export function codesOf(response: GraphQLResponse<unknown>): unknown[] {
  return (response.errors ?? []).map((error) => error.extensions?.code);
}

/** Runs `action` and asserts that the sandbox received no request meanwhile. */
export async function withoutUpstreamCall<T>(
  sandbox: Pick<Sandbox, 'requests'>,
  action: () => Promise<T>,
): Promise<T> {
  const before = sandbox.requests.length;
  const result = await action();
  expect(sandbox.requests.length).toBe(before);
  return result;
}

/** A sandbox and a gateway in front of it, as most test files use them. */
export interface SandboxGateway {
  sandbox: Sandbox;
  gateway: TestGateway;
  /** A token with every scope. */
  token: string;
  /** Closes the gateway, then the sandbox. */
  close: () => Promise<void>;
}

/** Starts a sandbox (with `sandboxOptions`) and a gateway in front of it (with `env`). */
export async function startSandboxGateway(
  env: SettingsEnv = {},
  sandboxOptions: SandboxOptions = {},
): Promise<SandboxGateway> {
  const sandbox = await startSandbox(sandboxOptions);
  const gateway = await startGateway(sandboxUpstreams(sandbox), env);
  return {
    sandbox,
    gateway,
    token: await gateway.token(),
    close: async () => {
      await gateway.close();
      await sandbox.close();
    },
  };
}
