/**
 * The signature of a notification (docs/webhooks.md): the header
 * `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, with several
 * `v1=` entries allowed so that a sender can sign with a new and an old secret while keys rotate.
 * The bytes signed are the raw body as received, never JSON parsed and written again.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-webhook-signature';

/** Longest header read, and most `v1=` entries compared: the work a stranger can cause is bounded. */
const MAX_HEADER_CHARS = 2048;
const MAX_SIGNATURES = 8;
const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** A header that has the form: its time and its candidate signatures (32 bytes each). */
export interface SignatureHeader {
  t: number;
  signatures: Buffer[];
}

/** Reads the header; undefined when it is missing or has not the form above. */
export function parseSignatureHeader(
  value: string | string[] | undefined,
): SignatureHeader | undefined {
  if (typeof value !== 'string' || value.length > MAX_HEADER_CHARS) return undefined;
  let t: number | undefined;
  const signatures: Buffer[] = [];
  for (const part of value.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    const text = part.slice(at + 1).trim();
    if (name === 't') {
      if (t !== undefined || !/^\d{1,12}$/.test(text)) return undefined;
      t = Number(text);
    } else if (name === 'v1' && HEX_SHA256.test(text) && signatures.length < MAX_SIGNATURES) {
      signatures.push(Buffer.from(text, 'hex'));
    }
  }
  if (t === undefined || signatures.length === 0) return undefined;
  return { t, signatures };
}

/** The HMAC-SHA256 of `"<t>.<body>"` keyed with `secret` (its UTF-8 bytes). */
export function signatureOf(secret: string, t: number, body: Buffer | string): Buffer {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest();
}

/**
 * Whether one of the header's signatures is the body's under one of `secrets`. Every comparison
 * is constant-time (crypto.timingSafeEqual), so the time taken tells nothing about how much of a
 * guess was right.
 */
export function signatureMatches(
  header: SignatureHeader,
  body: Buffer,
  secrets: readonly string[],
) {
  let matched = false;
  for (const secret of secrets) {
    const expected = signatureOf(secret, header.t, body);
    for (const candidate of header.signatures) {
      // No early exit: every candidate is compared against every secret.
      if (timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  return matched;
}

/**
 * The header value that signs `body` at `t` (unix seconds) with each of `secrets`: what a sender
 * (the sandbox, a relay, the tests) puts in `X-Webhook-Signature`.
 */
export function signWebhook(
  body: Buffer | string,
  secrets: string | readonly string[],
  t = Math.floor(Date.now() / 1000),
): string {
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${t}`, ...keys.map((key) => `v1=${signatureOf(key, t, body).toString('hex')}`)].join(
    ',',
  );
}
