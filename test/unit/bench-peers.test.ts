/**
 * The benchmark's peers are written as their users write them: nothing under bench/peers/ comes
 * from the gateway's src/, and their own plain mapping serves the same fields, statuses and
 * formats as the gateway for the stub's records (so the bench compares like with like), while
 * refusing an answer that lacks a field it reads.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_PORT, ROOT, type Started, startNode } from '../../bench/lib.ts';
import {
  type Json,
  kycUserOf,
  transactionOf,
  UpstreamAnswerError,
} from '../../bench/peers/mapping.ts';
import { KYC_PATH, PAYMENT_PATH, STUB_CREDENTIALS } from '../../bench/queries.ts';
import { moneyOfExact } from '../../src/model/records.ts';
import { moneySourceReviver, upstreamShapes } from '../../src/upstream/shapes.ts';

const PEERS = `${ROOT}bench/peers/`;

it('imports nothing from src/ in any file under bench/peers/', () => {
  const sources = (dir: string): string[] =>
    readdirSync(`${PEERS}${dir}`, { withFileTypes: true }).flatMap((entry) => {
      if (entry.isDirectory()) {
        return entry.name === 'node_modules' ? [] : sources(`${dir}${entry.name}/`);
      }
      return /\.(ts|js|mjs|cjs)$/.test(entry.name) ? [`${dir}${entry.name}`] : [];
    });
  const files = sources('');
  expect(files.length).toBeGreaterThan(3);
  for (const file of files) {
    const source = readFileSync(`${PEERS}${file}`, 'utf8');
    // Static imports, re-exports and dynamic imports alike.
    const specifiers = [...source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map(
      (match) => match[1] ?? '',
    );
    for (const specifier of specifiers) {
      expect(specifier, `${file} imports ${specifier}`).not.toMatch(/(^|\/)src\//);
    }
  }
});

describe("the peers' mapping of the stub's records", () => {
  let stub: Started;
  const transactions: string[] = [];
  const users: string[] = [];

  beforeAll(async () => {
    stub = await startNode({
      name: 'peers-test-stub',
      script: 'bench/upstream-stub.ts',
      env: {},
      portPattern: JSON_PORT,
    });
    const base = `http://127.0.0.1:${stub.port}`;
    for (let i = 0; i < 20; i += 1) {
      const tx = await fetch(`${base}${PAYMENT_PATH}NT-GEN${String(i * 7919).padStart(6, '0')}`, {
        headers: { authorization: `Bearer ${STUB_CREDENTIALS.paymentAccessToken}` },
      });
      transactions.push(await tx.text());
      const query = new URLSearchParams({
        userRef: `peer-user-${i}`,
        slug: STUB_CREDENTIALS.kycBusinessSlug,
      });
      const kyc = await fetch(`${base}${KYC_PATH}?${query}`, {
        headers: { 'x-secret-key': STUB_CREDENTIALS.kycSecretKey },
      });
      users.push(await kyc.text());
    }
  });
  afterAll(async () => {
    await stub?.stop();
  });

  const shapes = upstreamShapes('UTC');

  it('serves every Transaction field as the gateway does', () => {
    transactions.forEach((body, i) => {
      const txRef = `NT-GEN${i}`;
      const gateway = shapes.transactionResponse.parse(JSON.parse(body, moneySourceReviver));
      // The gateway keeps each amount exact and writes its Money when a query asks for it.
      const { amountExact, appFeeExact, merchantFeeExact, ...record } = gateway.data;
      expect(transactionOf(JSON.parse(body) as Json, txRef)).toEqual({
        ...record,
        amountMoney: moneyOfExact(amountExact, record.currency),
        appFeeMoney: moneyOfExact(appFeeExact, record.currency),
        merchantFeeMoney: moneyOfExact(merchantFeeExact, record.currency),
        txRef,
        event: gateway.event,
      });
    });
  });

  it('serves every KycUser field as the gateway does, currentLevel included', () => {
    users.forEach((body, i) => {
      const gateway = shapes.kycResponse.parse(JSON.parse(body)).data;
      const { currentLevel, ...record } = kycUserOf(JSON.parse(body) as Json, `peer-user-${i}`);
      expect(record).toEqual({ ...gateway, userRef: gateway.userRef ?? `peer-user-${i}` });
      expect(currentLevel).toEqual(gateway.levels.find((level) => level.level === gateway.level));
    });
  });

  it('refuses an answer without a field it reads, naming the field', () => {
    const body = JSON.parse(transactions[0] ?? '') as { data: Record<string, Json> };
    delete body.data.txStatus;
    expect(() => transactionOf(body as Json, 'NT-GEN0')).toThrow(UpstreamAnswerError);
    expect(() => transactionOf(body as Json, 'NT-GEN0')).toThrow(/data\.txStatus/);
    expect(() => transactionOf({ data: null }, 'NT-GEN0')).toThrow(/data is not an object/);
    const user = JSON.parse(users[0] ?? '') as { data: Record<string, Json> };
    user.data.levels = 'tier_1';
    expect(() => kycUserOf(user as Json, 'u')).toThrow(/data\.levels is not an array/);
    const time = JSON.parse(transactions[0] ?? '') as { data: Record<string, Json> };
    time.data.txTimestamp = 'yesterday';
    expect(() => transactionOf(time as Json, 'NT-GEN0')).toThrow(/data\.txTimestamp is not a time/);
  });
});
