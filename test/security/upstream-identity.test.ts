/**
 * The upstream's word is not taken for whose record it is, and its bodies cannot
 * stall the gateway. A KYC answer for another userRef, or a payment answer naming another txRef,
 * is UPSTREAM_BAD_RESPONSE; a body nested deeper than 64 levels or holding a number of more than
 * 100 characters is refused before any costly parse, while other requests go on being answered.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { kycBody, transactionBody } from '../helpers/fixture.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { codesOf, gql } from '../helpers/gateway.ts';
import { follow } from '../helpers/processes.ts';

const JSON_TYPE = { 'content-type': 'application/json' };
const KYC = (userRef: string) => `{ kycUser(userRef: "${userRef}") { userRef name } }`;
const TX = (txRef: string) => `{ transaction(txRef: "${txRef}") { txRef status } }`;

/** A KYC answer whose first check's `result` is nested `levels` deep. */
function deepKycBody(userRef: string, levels: number): string {
  const text = JSON.stringify(kycBody({ userRef }));
  const nested = `${'['.repeat(levels)}${']'.repeat(levels)}`;
  return text.replace('"result":{}', `"result":${nested}`);
}

describe('whose record it is', () => {
  it("a KYC answer carrying another user's record is UPSTREAM_BAD_RESPONSE, never served", async () => {
    const { gateway, token } = await setup(byRef, {
      kyc: () => ({ body: kycBody({ userRef: 'usr_victim', name: 'Victim Person' }) }),
    });
    const response = await gql(gateway, KYC('usr_other'), {}, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
    expect(response.data).toEqual({ kycUser: null });
    expect(JSON.stringify(response)).not.toContain('Victim');
    // The user's own record, and one without a userRef (the documented "as asked"), pass.
    const own = await gql(gateway, KYC('usr_victim'), {}, token);
    expect(own.data).toEqual({ kycUser: { userRef: 'usr_victim', name: 'Victim Person' } });
  });

  it('a payment answer naming another txRef is UPSTREAM_BAD_RESPONSE', async () => {
    const { gateway, token } = await setup((request) => {
      const asked = request.path.split('/').pop() ?? '';
      const txRef = asked === 'NT-ASKED1' ? 'NT-VICTIM1' : asked;
      return { body: transactionBody({ txRef, customer: { fullname: 'Victim Person' } }) };
    });
    const response = await gql(gateway, TX('NT-ASKED1'), {}, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
    expect(response.data).toEqual({ transaction: null });
    // Naming itself is fine.
    expect((await gql(gateway, TX('NT-SELF1'), {}, token)).data).toEqual({
      transaction: { txRef: 'NT-SELF1', status: 'SUCCESSFUL' },
    });
  });
});

describe('bodies that would stall the gateway', () => {
  it('64 levels pass, 65 and 200,000 are UPSTREAM_BAD_RESPONSE (POST and SSE), in JSON', async () => {
    const { gateway, token } = await setup(byRef, {
      kyc: (request) => {
        const userRef = request.query.get('userRef') ?? '';
        // The envelope holds the result at depth 6: 58 more levels make 64.
        const levels = { usr_64: 58, usr_65: 59, usr_deep: 200_000 }[userRef] ?? 0;
        return { headers: JSON_TYPE, body: deepKycBody(userRef, levels) };
      },
      env: { CACHE_TTL_KYC_SECONDS: '0' },
    });
    expect((await gql(gateway, KYC('usr_64'), {}, token)).data).toEqual({
      kycUser: { userRef: 'usr_64', name: 'Test Person' },
    });
    for (const userRef of ['usr_65', 'usr_deep']) {
      const response = await gql(gateway, KYC(userRef), {}, token);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('json');
      expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
    }
  });

  it('a transaction with a 1.5 MB number is refused, and other requests are answered meanwhile', async () => {
    const huge = '1'.repeat(1_500_000);
    const { gateway, token } = await setup((request) => {
      const txRef = request.path.split('/').pop() ?? '';
      if (txRef.startsWith('NT-HUGE')) {
        const text = JSON.stringify(transactionBody({ paymentRef: txRef }));
        return { headers: JSON_TYPE, body: text.replace('"amount":1000.5', `"amount":${huge}`) };
      }
      if (txRef.startsWith('NT-DEEP')) {
        const text = JSON.stringify(transactionBody({ paymentRef: txRef }));
        const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
        return {
          headers: JSON_TYPE,
          body: text.replace('"message":"Approved"', `"message":${deep}`),
        };
      }
      if (txRef === 'NT-HUNDRED1') {
        const text = JSON.stringify(transactionBody({ paymentRef: txRef }));
        return {
          headers: JSON_TYPE,
          body: text.replace('"amount":1000.5', `"amount":${'9'.repeat(100)}`),
        };
      }
      return byRef(request, 0);
    });
    // A 100-character number is still read (and then judged by the shape).
    const hundred = await gql(gateway, TX('NT-HUNDRED1'), {}, token);
    expect(hundred.data).toEqual({ transaction: { txRef: 'NT-HUNDRED1', status: 'SUCCESSFUL' } });

    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const victim: number[] = [];
    let attacking = true;
    const victimLoop = (async () => {
      for (let i = 0; attacking || i < 5; i += 1) {
        const started = performance.now();
        const answer = await gql(gateway, TX(`NT-VICTIM${i}`), {}, token);
        victim.push(performance.now() - started);
        expect(answer.data).toEqual({
          transaction: { txRef: `NT-VICTIM${i}`, status: 'SUCCESSFUL' },
        });
      }
    })();
    const refused = [];
    for (let i = 0; i < 6; i += 1) {
      refused.push(gql(gateway, TX(`${i % 2 ? 'NT-DEEP' : 'NT-HUGE'}${i}`), {}, token));
    }
    const answers = await Promise.all(refused);
    attacking = false;
    await victimLoop;
    delay.disable();
    for (const answer of answers) expect(codesOf(answer)).toEqual(['UPSTREAM_BAD_RESPONSE']);
    const sorted = [...victim].sort((x, y) => x - y);
    const p50 = sorted[Math.floor(sorted.length / 2)] ?? 0;
    const max = sorted.at(-1) ?? 0;
    const loopMaxMs = delay.max / 1e6;
    console.info(
      `[upstream-identity] 6 refused bodies (3 × 1.5 MB number, 3 × 200,000 deep); victim: ${victim.length} requests, p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms; event-loop delay max ${loopMaxMs.toFixed(1)} ms`,
    );
    // The old parse of one such number alone blocked the loop for about 0.9 s.
    expect(loopMaxMs).toBeLessThan(250);
  });

  it('a live subscription whose first read is such a body ends with UPSTREAM_BAD_RESPONSE (regression guard)', async () => {
    const { gateway, token } = await setup(() => {
      const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      return { headers: JSON_TYPE, body: `{"event":"x","data":${deep}}` };
    });
    const followed = follow(gateway, 'NT-SUBDEEP1', token);
    await followed.done;
    expect(JSON.stringify(followed.errors)).toContain('UPSTREAM_BAD_RESPONSE');
  });
});
