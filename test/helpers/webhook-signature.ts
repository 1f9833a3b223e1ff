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

/** POSTs `body` to `path` of the gateway at `url`, signed with `secrets` (none: unsigned). */
export async function postWebhook(
  url: string,
  path: string,
  body: string,
  secrets: string[],
): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(secrets.length > 0 && { 'x-webhook-signature': signWebhook(body, secrets) }),
    },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}
