import { Agent, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.ts';
import { byRef, setup } from '../helpers/fixture-gateway.ts';

interface Answered {
  status: number;
  connection: string | undefined;
  body: string;
}

/** POSTs `query` through `agent` (keep-alive): the answer's status, `Connection` and body. */
function post(url: string, agent: Agent, token: string, query: string): Promise<Answered> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/graphql`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ query }));
  });
}

describe('the drain', () => {
  it('closes the connection of answers already under way and of new ones, not of those that went out before', async () => {
    let release = (): void => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { payment, gateway, token } = await setup((req, index) => ({
      ...byRef(req, index),
      until: held,
    }));
    const agent = new Agent({ keepAlive: true });
    try {
      const before = await post(gateway.url, agent, token, '{ __typename }');
      expect(before.status).toBe(200);
      expect(before.connection).toBe('keep-alive');

      // Under way: its upstream call made, its answer not yet begun.
      const pending = post(
        gateway.url,
        agent,
        token,
        '{ transaction(txRef: "NT-DRAIN1") { txRef } }',
      );
      await until(() => payment.requests.length === 1, 10_000);
      gateway.drain();
      release();
      const during = await pending;
      expect(during.status).toBe(200);
      expect(JSON.parse(during.body)).toEqual({ data: { transaction: { txRef: 'NT-DRAIN1' } } });
      expect(during.connection).toBe('close');

      const after = await post(gateway.url, agent, token, '{ __typename }');
      expect(after.status).toBe(200);
      expect(after.connection).toBe('close');
    } finally {
      agent.destroy();
    }
  });
});
