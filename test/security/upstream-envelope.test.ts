/**
 * An error envelope is "unknown record" (null) only when its message says so in the contract's
 * words; any other — "Unknown error, please retry" included — is UPSTREAM_BAD_RESPONSE, never a
 * null that would tell a merchant a real payment does not exist.
 */
import { describe, expect, it } from 'vitest';
import { setup } from '../helpers/fixture-gateway.ts';
import { codesOf, gql } from '../helpers/gateway.ts';

const envelope = (message: string) => () => ({ body: { error: true, message } });

const NOT_FOUND = [
  'Transaction not found',
  'This record does not exist',
  'No such user',
  'Unknown user',
  'Unknown transaction',
  'Unknown reference',
];

describe.each([
  ['payment', '{ transaction(txRef: "NT-ENV1") { txRef } }', 'transaction'],
  ['KYC', '{ kycUser(userRef: "usr_env") { userRef } }', 'kycUser'],
])('the %s interface', (name, query, field) => {
  const options = (message: string) =>
    name === 'KYC' ? { kyc: envelope(message), env: { CACHE_TTL_NOT_FOUND_SECONDS: '0' } } : {};
  const handler = (message: string) => (name === 'KYC' ? () => ({ body: {} }) : envelope(message));

  it('reads "Unknown error, please retry" as a bad response, not as unknown', async () => {
    const message = 'Unknown error, please retry';
    const { gateway, token } = await setup(handler(message), options(message));
    const response = await gql(gateway, query, {}, token);
    expect(codesOf(response)).toEqual(['UPSTREAM_BAD_RESPONSE']);
    expect(response.data).toEqual({ [field]: null });
  });

  it.each(NOT_FOUND)('reads "%s" as unknown (null, no error)', async (message) => {
    const { gateway, token } = await setup(handler(message), options(message));
    const response = await gql(gateway, query, {}, token);
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ [field]: null });
  });
});
