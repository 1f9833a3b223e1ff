/** A payment fixture, a KYC fixture and a gateway over both, closed after each test. */
import { afterEach } from 'vitest';
import type { SettingsEnv } from '../../src/settings.ts';
import {
  type Fixture,
  type FixtureHandler,
  kycByRef,
  startFixture,
  transactionBody,
} from './fixture.ts';
import { startGateway, type TestGateway } from './gateway.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

export interface FixtureSetup {
  payment: Fixture;
  kyc: Fixture;
  gateway: TestGateway;
  token: string;
}

/** Starts the fixtures and a gateway (budget 1.5 s, 20 ms base backoff unless overridden). */
export async function setup(
  handler: FixtureHandler,
  options: {
    env?: SettingsEnv;
    kyc?: FixtureHandler;
    paymentPath?: string;
    logLines?: string[];
  } = {},
): Promise<FixtureSetup> {
  const payment = await startFixture(handler);
  const kyc = await startFixture(options.kyc ?? kycByRef);
  const gateway = await startGateway(
    { paymentUrl: payment.url + (options.paymentPath ?? ''), kycUrl: kyc.url },
    { UPSTREAM_TIMEOUT_MS: '1500', UPSTREAM_RETRY_BASE_DELAY_MS: '20', ...options.env },
    options.logLines ? { logLines: options.logLines } : {},
  );
  cleanups.push(payment.close, kyc.close, gateway.close);
  return { payment, kyc, gateway, token: await gateway.token() };
}

/** Answers a good record whose paymentRef is the txRef asked for. */
export const byRef: FixtureHandler = (request) => ({
  body: transactionBody({ paymentRef: request.path.split('/').pop() }),
});
