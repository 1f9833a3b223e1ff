/**
 * `POST /webhooks/payment` and `POST /webhooks/kyc` (docs/webhooks.md): a signed notification that
 * names a record is a hint, never the record. The gateway checks the signature over the raw
 * bytes, answers at once, then fetches the record fresh through the record sources (as
 * `verifyTransaction` and `refreshKycUser` do: never from the cache, and stored), and pushes it
 * to the record's live subscribers on every replica (src/live/). Nothing of the body but the
 * reference is used.
 *
 * Answers: 401 (no upstream call) when the signature is missing, wrong, or its time `t` is out
 * of the tolerance window; 413 over 64 KiB; 400 when the body is not JSON or names no
 * well-formed reference; 200 for a notification already accepted within the window (nothing
 * fetched); 202 for a good one. Each refusal is counted and logged (never the body or the
 * signature).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordSources } from '../cache/sources.ts';
import { GatewayError } from '../errors.ts';
import { readBytes } from '../http/body.ts';
import { kindOf, type LiveSource, type LiveStatusHub } from '../live/hub.ts';
import { checkText, isTxRef } from '../model/input.ts';
import type { Logger } from '../observability/logger.ts';
import { type BusinessLabel, type GatewayMetrics, NO_BUSINESS } from '../observability/metrics.ts';
import type { Refresher } from './refresh.ts';
import type { ReplayGuard } from './replay.ts';
import { parseSignatureHeader, SIGNATURE_HEADER, signatureMatches } from './signature.ts';

/** Largest notification body read. */
export const MAX_WEBHOOK_BYTES = 64 * 1024;

const SOURCES = new Map<string, LiveSource>([
  ['payment', 'payment'],
  ['kyc', 'kyc'],
]);

export type WebhookOutcome =
  | 'accepted'
  | 'replay'
  | 'unsigned'
  | 'bad_signature'
  | 'expired'
  | 'bad_request'
  | 'too_large';

export interface WebhookDeps {
  /** The current secret first, then earlier ones still accepted. */
  secrets: readonly string[];
  toleranceSeconds: number;
  sources: RecordSources;
  live: LiveStatusHub;
  replay: ReplayGuard;
  refresher: Refresher;
  metrics: GatewayMetrics;
  /** The business's `business` label (with several businesses; `{}` with one). */
  label?: BusinessLabel;
  /** The business's logger (with several businesses, its lines name the business). */
  logger: Logger;
  /** The clock (ms since the epoch); tests move it. */
  now?: () => number;
}

/** One business's notifications of one source. */
export type WebhookHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  source: LiveSource,
) => void;

/** Every path under /webhooks/: to the handler of the business it names, or 404. */
export type WebhookRouter = (req: IncomingMessage, res: ServerResponse) => void;

function answer(res: ServerResponse, status: number, body: Record<string, string>, close = false) {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...(status === 405 && { allow: 'POST' }),
    ...(close && { connection: 'close' }),
  });
  res.end(text);
}

/** The reference the body names (top level first, then inside `data`), or undefined. */
function referenceOf(source: LiveSource, body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const field = source === 'payment' ? 'txRef' : 'userRef';
  const top = (body as Record<string, unknown>)[field];
  const data = (body as Record<string, unknown>).data;
  const nested =
    typeof data === 'object' && data !== null
      ? (data as Record<string, unknown>)[field]
      : undefined;
  const value = top ?? nested;
  if (typeof value !== 'string') return undefined;
  if (source === 'payment') return isTxRef(value) ? value : undefined;
  try {
    return checkText('userRef', value, 128);
  } catch {
    return undefined;
  }
}

/** Builds the handler of both webhook paths. */
export function createWebhookHandler(deps: WebhookDeps): WebhookHandler {
  const now = deps.now ?? Date.now;
  const { metrics, logger } = deps;
  const label = deps.label ?? NO_BUSINESS;

  const refuse = (
    res: ServerResponse,
    source: LiveSource,
    outcome: Exclude<WebhookOutcome, 'accepted' | 'replay'>,
    status: number,
    message: string,
    close = false,
  ): void => {
    metrics.webhooks.inc({ source, outcome, ...label });
    // Which notification and why, never its body or signature.
    logger.warn({ source, outcome, status }, 'webhook refused');
    answer(res, status, { error: message }, close);
  };

  /** Fetches the record fresh, stores it (the sources do), and pushes it to its subscribers. */
  const refresh = (source: LiveSource, id: string, at: number): void => {
    const kind = kindOf(source);
    void deps.refresher.request(`${source}:${kind.topic(id)}`, at, async (since) => {
      try {
        const record = await kind.read(deps.sources, id, true);
        if (record !== null) await deps.live.push(source, id, record, since);
      } catch (error) {
        const code = error instanceof GatewayError ? error.code : 'INTERNAL_SERVER_ERROR';
        logger.warn(
          { source, code },
          'webhook: the fresh fetch failed; polling stays the fallback',
        );
      }
    });
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, source: LiveSource) => {
    const receivedAt = now();
    const length = req.headers['content-length'];
    if (length !== undefined && (!/^\d+$/.test(length) || Number(length) > MAX_WEBHOOK_BYTES)) {
      req.resume();
      refuse(res, source, 'too_large', 413, 'The notification is larger than 64 KiB.', true);
      return;
    }
    // Header checks first: a notification refused here costs no body read.
    const header = parseSignatureHeader(req.headers[SIGNATURE_HEADER]);
    if (!header) {
      req.resume();
      refuse(res, source, 'unsigned', 401, 'X-Webhook-Signature is missing or malformed.', true);
      return;
    }
    if (Math.abs(receivedAt / 1000 - header.t) > deps.toleranceSeconds) {
      req.resume();
      refuse(res, source, 'expired', 401, 'The signature time is outside the tolerance.', true);
      return;
    }
    const body = await readBytes(req, MAX_WEBHOOK_BYTES);
    if (body === 'too_large') {
      refuse(res, source, 'too_large', 413, 'The notification is larger than 64 KiB.', true);
      // Whatever else the sender pushes is not read: the connection goes with the answer.
      res.once('finish', () => req.socket.destroy());
      return;
    }
    if (!signatureMatches(header, body, deps.secrets)) {
      refuse(res, source, 'bad_signature', 401, 'The signature does not match.');
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      refuse(res, source, 'bad_request', 400, 'The body is not JSON.');
      return;
    }
    const id = referenceOf(source, parsed);
    if (id === undefined) {
      const field = source === 'payment' ? 'a txRef (NT-…)' : 'a userRef';
      refuse(res, source, 'bad_request', 400, `The body names no well-formed ${field}.`);
      return;
    }
    if (!(await deps.replay.first(source, header.t, body))) {
      metrics.webhooks.inc({ source, outcome: 'replay', ...label });
      answer(res, 200, { status: 'already accepted' });
      return;
    }
    metrics.webhooks.inc({ source, outcome: 'accepted', ...label });
    answer(res, 202, { status: 'accepted' });
    refresh(source, id, receivedAt);
  };

  return (req, res, source) => {
    if (req.method !== 'POST') {
      req.resume();
      answer(res, 405, { error: 'Use POST.' });
      return;
    }
    serve(req, res, source).catch(() => {
      if (!res.headersSent)
        answer(res, 400, { error: 'The notification could not be read.' }, true);
      else res.destroy();
    });
  };
}

/**
 * The webhook paths: with one business `/webhooks/payment` and `/webhooks/kyc`; with several,
 * `/webhooks/payment/{businessId}` and `/webhooks/kyc/{businessId}`, each checked with that
 * business's secret alone. A path of no business, of one without a secret, or without the id
 * when several are served: 404, nothing read.
 */
export function routeWebhooks(businesses: {
  several: boolean;
  resolve(claim: string | undefined): { webhooks: WebhookHandler | undefined } | undefined;
  get(id: string): { webhooks: WebhookHandler | undefined } | undefined;
}): WebhookRouter {
  return (req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const [, root, name, id, ...rest] = path.split('/');
    const source = root === 'webhooks' && name !== undefined ? SOURCES.get(name) : undefined;
    const business =
      source === undefined || rest.length > 0
        ? undefined
        : businesses.several
          ? id === undefined || id === ''
            ? undefined
            : businesses.get(id)
          : id === undefined
            ? businesses.resolve(undefined)
            : undefined;
    const handler = business?.webhooks;
    if (source === undefined || handler === undefined) {
      req.resume();
      answer(res, 404, { error: 'not found' });
      return;
    }
    handler(req, res, source);
  };
}
