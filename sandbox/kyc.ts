/**
 * The simulated KYC interface: `GET /api/v1/user/kyc`, the
 * stand-in of the browser SDK (its endpoints are in sdk/api.ts), and
 * the store of KYC users that the interface reads and the SDK's widget writes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KycUserJson } from '../src/upstream/shapes.ts';
import { type DemoBusiness, demoKycUsers } from './data.ts';
import {
  DelayedAnswers,
  findByCredential,
  resetConnection,
  type SandboxHandler,
  send,
  sendJson,
} from './http.ts';
import type { KycStore } from './kyc-store.ts';
import { handleSdkRequest, isSdkPath } from './sdk/api.ts';

/** One business the KYC interface serves. */
export type KycAccount = {
  /** The `x-secret-key` that names this business. */
  secretKey: string;
  /** The business slug this business's requests must carry. */
  businessSlug: string;
  /** The public key the SDK's widget presents for this business. */
  publicKey: string;
  /** This business's users. */
  store: KycStore;
  /** Whose demo data the business answers (the slow user's name). */
  business: DemoBusiness;
};

/** Settings of the KYC handler. */
export type KycHandlerOptions = {
  /** The businesses, told apart by their secret keys (and, for the SDK, public keys). */
  accounts: readonly KycAccount[];
  /** Delay of `usr_kyc_slow`. */
  slowMs: number;
  /** The clock. */
  now: () => number;
};

const KYC_PATH = '/api/v1/user/kyc';

/** Creates the handler of the KYC interface (and of the SDK: script, style, widget endpoints). */
export function createKycHandler(options: KycHandlerOptions): SandboxHandler {
  const delayed = new DelayedAnswers();

  const handle = (req: IncomingMessage, res: ServerResponse, url: URL, body: string): void => {
    if (isSdkPath(url.pathname)) {
      handleSdkRequest(options, req, res, url, body);
      return;
    }
    if (url.pathname !== KYC_PATH) {
      sendJson(res, 404, { message: 'Not found', error: true, data: null });
      return;
    }
    if (req.method !== 'GET') {
      sendJson(
        res,
        405,
        { message: 'Method not allowed', error: true, data: null },
        { allow: 'GET' },
      );
      return;
    }
    const secret = req.headers['x-secret-key'];
    const account = findByCredential(
      typeof secret === 'string' ? secret : undefined,
      options.accounts,
      (a) => a.secretKey,
    );
    if (account === undefined) {
      sendJson(res, 401, { message: 'Invalid secret key', error: true, data: null });
      return;
    }
    const userRef = url.searchParams.get('userRef');
    if (userRef === null || userRef === '') {
      sendJson(res, 400, { message: 'userRef is required', error: true, data: null });
      return;
    }
    // A key is its business's only: another business's slug is as wrong as an unknown one.
    if (url.searchParams.get('slug') !== account.businessSlug) {
      sendJson(res, 400, { message: 'Invalid business slug', error: true, data: null });
      return;
    }

    switch (userRef) {
      case 'usr_kyc_slow':
        delayed.after(res, options.slowMs, () =>
          sendJson(res, 200, success(slowUser(account.business))),
        );
        return;
      case 'usr_kyc_500':
        sendJson(res, 500, { message: 'Internal server error', error: true, data: null });
        return;
      case 'usr_kyc_envelope':
        sendJson(res, 200, { error: true, message: 'Service temporarily degraded', data: null });
        return;
      case 'usr_kyc_gone':
        sendJson(res, 200, { error: true, message: 'User does not exist', data: null });
        return;
      case 'usr_kyc_notjson':
        send(
          res,
          200,
          'text/html; charset=utf-8',
          '<html><body><h1>Maintenance</h1><p>Back soon.</p></body></html>',
        );
        return;
      case 'usr_kyc_badshape':
        sendJson(res, 200, { error: false, message: 'ok', data: { levels: 'none' } });
        return;
      case 'usr_kyc_reset':
        resetConnection(req);
        return;
      default:
        break;
    }

    const user = account.store.get(userRef);
    if (user === undefined) {
      sendJson(res, 404, { message: 'User not found', error: true, data: null });
      return;
    }
    sendJson(res, 200, success(user));
  };

  return { handle, close: () => delayed.clear() };
}

function success(user: KycUserJson): { message: string; error: false; data: KycUserJson } {
  return { message: 'KYC details retrieved successfully', error: false, data: user };
}

function slowUser(business: DemoBusiness): KycUserJson {
  const template = demoKycUsers(business).find((u) => u.userRef === 'usr_demo_tier1');
  if (template === undefined) {
    throw new Error('demo user usr_demo_tier1 is missing');
  }
  return { ...template, userRef: 'usr_kyc_slow', name: 'Slow Sandbox User' };
}
