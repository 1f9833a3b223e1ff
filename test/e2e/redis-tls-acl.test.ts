/**
 * `CACHE_URL=rediss://user:password@…`: a gateway process on a real redis-server that speaks
 * only TLS (a certificate of a test CA made with openssl, trusted through Node's
 * NODE_EXTRA_CA_CERTS) and lets in only an ACL user limited to the gateway's keys and channels
 * (`~gw:*`, `&gw:*`; the default user off). The gateway connects, shares its cache there, and
 * never prints the password; with a wrong password it serves without Redis and says so, again
 * without printing it. Skipped (failed in CI) without redis-server or openssl.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import { type Fixture, kycByRef, startFixture, transactionBody } from '../helpers/fixture.ts';
import { query, spawnGateway, stopAllGateways, testToken } from '../helpers/processes.ts';
import { command, freePort, REDIS_SERVER, skipRedisTests } from '../helpers/redis.ts';

const OPENSSL = ['/usr/bin/openssl', '/usr/local/bin/openssl'].find((path) => existsSync(path));
const skip =
  skipRedisTests('redis-tls-acl') ||
  (!OPENSSL &&
    process.env.CI !== 'true' &&
    (console.warn('[redis-tls-acl] SKIPPED: no openssl'), true));

const PASSWORD = 'acl-Pa55word-never-logged';
const WRONG = 'wrong-Pa55word-never-logged';

let dir: string;
let port: number;
let ca: Buffer;
let server: ChildProcess | undefined;
let payment: Fixture;
let kyc: Fixture;

/** A client of the test's own, over TLS as the ACL user. */
function inspect(args: string[]): Promise<unknown> {
  return command(`rediss://gw:${PASSWORD}@127.0.0.1:${port}`, args, { ca });
}

beforeAll(async () => {
  if (skip) return;
  if (!REDIS_SERVER || !OPENSSL) throw new Error('CI=true but redis-server or openssl is absent');
  dir = await mkdtemp(join(tmpdir(), 'gw-redis-tls-'));
  const openssl = (args: string[]) => execFileSync(OPENSSL, args, { cwd: dir, stdio: 'ignore' });
  openssl(
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt'].concat(
      ['-days', '1', '-subj', '/CN=gateway test CA'],
    ),
  );
  openssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr'].concat([
      '-subj',
      '/CN=127.0.0.1',
    ]),
  );
  await writeFile(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key'].concat([
      '-CAcreateserial',
      '-out',
      'server.crt',
      '-days',
      '1',
      '-extfile',
      'san.ext',
    ]),
  );
  ca = await readFile(join(dir, 'ca.crt'));
  port = await freePort();
  server = spawn(
    REDIS_SERVER,
    ['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1']
      .concat([
        '--tls-cert-file',
        join(dir, 'server.crt'),
        '--tls-key-file',
        join(dir, 'server.key'),
      ])
      .concat(['--tls-ca-cert-file', join(dir, 'ca.crt'), '--tls-auth-clients', 'no'])
      .concat(['--save', '', '--appendonly', 'no'])
      .concat(['--user', 'default', 'off'])
      .concat(['--user', 'gw', 'on', `>${PASSWORD}`, '~gw:*', '&gw:*', '+@all']),
    { stdio: 'ignore' },
  );
  await until(async () => (await inspect(['PING']).catch(() => '')) === 'PONG', 10_000);
  payment = await startFixture((request) => ({
    body: transactionBody({ paymentRef: request.path.split('/').pop() }),
  }));
  kyc = await startFixture(kycByRef);
}, 60_000);

afterAll(async () => {
  await stopAllGateways();
  await payment?.close();
  await kyc?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(skip)('Redis over TLS with an ACL user', () => {
  it('connects with rediss://user:password@, keeps its cache there, and never prints the password', async () => {
    const gateway = await spawnGateway(
      { paymentUrl: payment.url, kycUrl: kyc.url },
      {
        CACHE_URL: `rediss://gw:${PASSWORD}@127.0.0.1:${port}`,
        NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt'),
        LOG_LEVEL: 'info',
      },
    );
    expect(await gateway.metric('gateway_redis_up')).toBe(1);
    const txRef = `NT-TLS${Date.now()}`;
    const token = await testToken();
    const answer = await query(gateway, `{ transaction(txRef: "${txRef}") { txRef } }`, token);
    expect(answer.body.data).toEqual({ transaction: { txRef } });
    await until(
      async () => ((await inspect(['KEYS', `gw:cache:tx:*${txRef}*`])) as string[]).length === 1,
      3000,
    );
    expect(await gateway.metric('gateway_redis_errors_total')).toBe(0);
    expect(gateway.output()).toContain('redis connected');
    expect(gateway.output()).not.toContain(PASSWORD);
    await gateway.stop();
    expect(gateway.output()).not.toContain(PASSWORD);
  });

  it('with a wrong password: serves without Redis (gateway_redis_up 0) and prints neither password', async () => {
    const gateway = await spawnGateway(
      { paymentUrl: payment.url, kycUrl: kyc.url },
      {
        CACHE_URL: `rediss://gw:${WRONG}@127.0.0.1:${port}`,
        NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt'),
        CACHE_CONNECT_TIMEOUT_MS: '1000',
        LOG_LEVEL: 'info',
      },
    );
    expect(await gateway.metric('gateway_redis_up')).toBe(0);
    const txRef = `NT-NOAUTH${Date.now()}`;
    const answer = await query(
      gateway,
      `{ transaction(txRef: "${txRef}") { txRef } }`,
      await testToken(),
    );
    expect(answer.body.data).toEqual({ transaction: { txRef } });
    await gateway.stop();
    expect(gateway.output()).not.toContain(WRONG);
    expect(gateway.output()).not.toContain(PASSWORD);
  });
});
