/**
 * What the gateway keeps beyond records must never outlive them: after `verifyTransaction` or
 * `refreshKycUser` on one replica, every replica answers the fresh record at once. (A per-process
 * reuse of whole responses once kept answering the old one on the other replica.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, kycBody, startFixture, transactionBody } from '../helpers/fixture.ts';
import {
  type GatewayProcess,
  query,
  spawnGateway,
  stopAllGateways,
  testToken,
} from '../helpers/processes.ts';
import { skipRedisTests, startRedis, type TestRedis } from '../helpers/redis.ts';

const skip = skipRedisTests('replica-consistency');

let redis: TestRedis;
let payment: Fixture;
let kyc: Fixture;
let a: GatewayProcess;
let b: GatewayProcess;
let token: string;
let message = 'first';
let name = 'First Name';

beforeAll(async () => {
  if (skip) return;
  redis = await startRedis();
  payment = await startFixture(() => ({ body: transactionBody({ message }) }));
  kyc = await startFixture((request) => ({
    body: kycBody({ userRef: request.query.get('userRef'), name }),
  }));
  const upstreams = { paymentUrl: payment.url, kycUrl: kyc.url };
  const env = { CACHE_URL: redis.url };
  [a, b] = await Promise.all([spawnGateway(upstreams, env), spawnGateway(upstreams, env)]);
  token = await testToken();
});

afterAll(async () => {
  await stopAllGateways();
  await payment?.close();
  await kyc?.close();
  await redis?.stop();
});

it.skipIf(skip)('after verifyTransaction on A, B answers the fresh record at once', async () => {
  const read = '{ transaction(txRef: "NT-REPLICA1") { message } }';
  for (const replica of [b, b, a]) {
    expect((await query(replica, read, token)).body).toEqual({
      data: { transaction: { message: 'first' } },
    });
  }
  message = 'second';
  const verified = await query(
    a,
    'mutation { verifyTransaction(txRef: "NT-REPLICA1") { message } }',
    token,
  );
  expect(verified.body).toEqual({ data: { verifyTransaction: { message: 'second' } } });
  for (const replica of [b, a]) {
    expect((await query(replica, read, token)).body).toEqual({
      data: { transaction: { message: 'second' } },
    });
  }
});

it.skipIf(skip)('after refreshKycUser on B, A answers the fresh details at once', async () => {
  const read = '{ kycUser(userRef: "usr_replica") { name } }';
  for (const replica of [a, a, b]) {
    expect((await query(replica, read, token)).body).toEqual({
      data: { kycUser: { name: 'First Name' } },
    });
  }
  name = 'Second Name';
  await query(b, 'mutation { refreshKycUser(userRef: "usr_replica") { name } }', token);
  expect((await query(a, read, token)).body).toEqual({
    data: { kycUser: { name: 'Second Name' } },
  });
});
