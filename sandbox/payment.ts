/**
 * The simulated payment interface: `GET /pg/api/v1/transaction/status/{txRef}`,
 * with demo references and failure references.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TransactionResponseJson } from '../src/upstream/shapes.ts';
import {
  businessTransaction,
  type DemoBusiness,
  fixedTransaction,
  GENERATED_PREFIX,
  generatedTransaction,
  goodTransaction,
  type JsonObject,
  PENDING_PREFIX,
  pendingTransaction,
  TX_REF_PATTERN,
} from './data.ts';
import {
  DelayedAnswers,
  findByCredential,
  flatHeaders,
  resetConnection,
  type SandboxHandler,
  send,
  sendJson,
} from './http.ts';

/** One business the payment interface serves. */
export type PaymentAccount = {
  /** The bearer token that names this business. */
  accessToken: string;
  /** Whose demo data the business answers. */
  business: DemoBusiness;
  /** Told when a pending reference is first asked for, and when it will settle (epoch ms). */
  onPending?: (txRef: string, settlesAt: number, now: number) => void;
};

/** Settings of the payment handler. */
export type PaymentHandlerOptions = {
  /** The businesses, told apart by their bearer tokens (which must differ). */
  accounts: readonly PaymentAccount[];
  /** How long a `NT-PENDING…` reference stays PENDING after its first request. */
  pendingMs: number;
  /** Delay of `NT-SLOW001`. */
  slowMs: number;
  /** The clock. */
  now: () => number;
};

const STATUS_PATH_PREFIX = '/pg/api/v1/transaction/status/';

const UNAUTHORIZED = { message: 'Unauthorized', error: true };
const NOT_FOUND = { message: 'Transaction not found', error: true };

/** Per-reference state kept for at most this many references (oldest forgotten first). */
const MAX_REMEMBERED = 100_000;

/** Adds to a Set or Map, forgetting the oldest entry beyond MAX_REMEMBERED (long soak runs). */
function remember<K, V>(into: Set<K> | Map<K, V>, key: K, value?: V): void {
  if (into.size >= MAX_REMEMBERED) {
    const oldest = into.keys().next();
    if (!oldest.done) into.delete(oldest.value);
  }
  if (into instanceof Map) into.set(key, value as V);
  else into.add(key);
}

/** The state of one business: first-seen times of pending references, one-off failures served. */
type AccountState = {
  account: PaymentAccount;
  pendingSince: Map<string, number>;
  // References whose one-off failure (flaky 503, first 429) has been served.
  failedOnce: Set<string>;
};

/**
 * Creates the handler of the payment interface. Its state (first-seen times of
 * pending references, which flaky references already failed once) belongs to
 * this handler alone, so two sandboxes never share it, and within it to each
 * business, so two businesses never share it either.
 */
export function createPaymentHandler(options: PaymentHandlerOptions): SandboxHandler {
  const delayed = new DelayedAnswers();
  const states: AccountState[] = options.accounts.map((account) => ({
    account,
    pendingSince: new Map(),
    failedOnce: new Set(),
  }));

  const failOnceThen = (
    state: AccountState,
    txRef: string,
    fail: () => void,
    succeed: () => void,
  ): void => {
    if (state.failedOnce.has(txRef)) {
      succeed();
    } else {
      remember(state.failedOnce, txRef);
      fail();
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    if (!url.pathname.startsWith(STATUS_PATH_PREFIX)) {
      sendJson(res, 404, { message: 'Not found', error: true });
      return;
    }
    if (req.method !== 'GET') {
      sendJson(res, 405, { message: 'Method not allowed', error: true }, { allow: 'GET' });
      return;
    }
    const state = findByCredential(bearerToken(req), states, (s) => s.account.accessToken);
    if (state === undefined) {
      sendJson(res, 401, UNAUTHORIZED, { 'www-authenticate': 'Bearer' });
      return;
    }
    const txRef = decodeSegment(url.pathname.slice(STATUS_PATH_PREFIX.length));
    if (txRef === undefined || !TX_REF_PATTERN.test(txRef)) {
      sendJson(res, 404, NOT_FOUND);
      return;
    }
    const { business } = state.account;
    const answer = (record: JsonObject | TransactionResponseJson): void =>
      sendJson(res, 200, businessTransaction(record, txRef, business));
    const good = (): void => answer(goodTransaction(txRef));

    switch (txRef) {
      case 'NT-SLOW001':
        delayed.after(res, options.slowMs, good);
        return;
      case 'NT-ERROR500':
        sendJson(res, 500, { message: 'Internal server error', error: true });
        return;
      case 'NT-ERROR502':
        send(
          res,
          502,
          'text/html; charset=utf-8',
          '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>',
        );
        return;
      case 'NT-ERROR503':
        sendJson(res, 503, { message: 'Service unavailable', error: true });
        return;
      case 'NT-RATELIMIT001':
        sendJson(res, 429, { message: 'Too many requests', error: true }, { 'retry-after': '30' });
        return;
      case 'NT-RATELIMIT002':
        sendJson(res, 429, { message: 'Too many requests', error: true });
        return;
      case 'NT-RATELIMIT003':
        failOnceThen(
          state,
          txRef,
          () =>
            sendJson(
              res,
              429,
              { message: 'Too many requests', error: true },
              { 'retry-after': '1' },
            ),
          good,
        );
        return;
      case 'NT-NOTJSON001':
        send(
          res,
          200,
          'text/html; charset=utf-8',
          '<html><body><h1>Welcome to the payment portal</h1></body></html>',
        );
        return;
      case 'NT-BADSHAPE001':
        sendJson(res, 200, { event: 'PAYMENT_SUCCESSFUL', data: { amount: 'lots', txStatus: 7 } });
        return;
      case 'NT-NODATA001':
        sendJson(res, 200, { event: 'X' });
        return;
      case 'NT-RESET001':
        resetConnection(req);
        return;
      case 'NT-UNAUTH001':
        sendJson(res, 401, UNAUTHORIZED, { 'www-authenticate': 'Bearer' });
        return;
      case 'NT-FORBID001':
        sendJson(res, 403, { message: 'Forbidden', error: true });
        return;
      case 'NT-ECHO001':
        // Deliberately careless upstream: echoes the credentials it was sent.
        sendJson(res, 500, {
          message: 'Unhandled exception',
          error: true,
          debug: { method: req.method ?? '', url: req.url ?? '', headers: flatHeaders(req) },
        });
        return;
      default:
        break;
    }

    if (txRef.startsWith('NT-FLAKY')) {
      failOnceThen(
        state,
        txRef,
        () => sendJson(res, 503, { message: 'Service unavailable', error: true }),
        good,
      );
      return;
    }
    if (txRef.startsWith(PENDING_PREFIX)) {
      const now = options.now();
      const since = state.pendingSince.get(txRef) ?? now;
      if (!state.pendingSince.has(txRef)) {
        remember(state.pendingSince, txRef, since);
        state.account.onPending?.(txRef, since + options.pendingMs, now);
      }
      answer(pendingTransaction(txRef, now - since >= options.pendingMs));
      return;
    }
    if (txRef.startsWith(GENERATED_PREFIX) && txRef.length > GENERATED_PREFIX.length) {
      answer(generatedTransaction(txRef));
      return;
    }
    const record = fixedTransaction(txRef);
    if (record === undefined) {
      sendJson(res, 404, NOT_FOUND);
      return;
    }
    answer(record);
  };

  return { handle, close: () => delayed.clear() };
}

function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
