/**
 * The provider's webhook signature as the tests make it, with node:crypto alone (not the
 * gateway's code): `t=<unix seconds>,v1=<HMAC-SHA256 of "<t>.<body>">`, one `v1` per secret.
 */
import { createHmac } from 'node:crypto';

export function signWebhook(
  body: string,
  secrets: string[],
  t = Math.floor(Date.now() / 1000),
): string {
  const v1 = secrets.map(
    (secret) => `v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`,
  );
  return [`t=${t}`, ...v1].join(',');
}
