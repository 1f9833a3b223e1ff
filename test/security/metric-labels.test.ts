/**
 * Metric labels that a few callers cannot take from their owners: one caller sending 200 junk
 * operation names leaves them all `other`, while the project's own operations always keep their
 * label and a name sent by several callers earns one.
 */
import { describe, expect, it } from 'vitest';
import { byRef, setup } from '../helpers/fixture-gateway.ts';
import { gql } from '../helpers/gateway.ts';

const count = (metrics: string, operation: string) =>
  Number(
    new RegExp(
      `gateway_graphql_requests_total\\{operation="${operation}",outcome="ok"\\} (\\d+)`,
    ).exec(metrics)?.[1] ?? 0,
  );

describe('operation labels', () => {
  it('200 junk names from one caller do not crowd out the names of others', async () => {
    const { gateway, token } = await setup(byRef);
    const attacker = await gateway.token({ sub: 'label-squatter' });
    for (let i = 0; i < 200; i += 1) {
      await gql(gateway, `query Junk${i} { gatewayInfo { version } }`, {}, attacker);
    }
    // A team's own operation name, used by three services, and one of the project's operations.
    for (const sub of ['svc-a', 'svc-b', 'svc-c', 'svc-a']) {
      const own = await gateway.token({ sub });
      await gql(gateway, 'query MerchantDashboard { gatewayInfo { version } }', {}, own);
    }
    await gql(
      gateway,
      'query Transaction($txRef: ID!) { transaction(txRef: $txRef) { txRef } }',
      { txRef: 'NT-LABEL1' },
      token,
    );
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).not.toMatch(/operation="Junk\d+"/);
    expect(count(metrics, 'other')).toBeGreaterThanOrEqual(200);
    // Labelled from the third distinct caller on.
    expect(count(metrics, 'MerchantDashboard')).toBe(2);
    expect(count(metrics, 'Transaction')).toBe(1);
  });

  it('the same name from one caller, however often, stays `other`', async () => {
    const { gateway } = await setup(byRef);
    const one = await gateway.token({ sub: 'only-one' });
    for (let i = 0; i < 10; i += 1) {
      await gql(gateway, 'query Lonely { gatewayInfo { version } }', {}, one);
    }
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).not.toContain('operation="Lonely"');
    expect(count(metrics, 'other')).toBe(10);
  });
});
