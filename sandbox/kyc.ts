/**
 * The simulated KYC interface: `GET /api/v1/user/kyc`, the
 * stand-in of the browser SDK (its endpoints are in sdk/api.ts), and
 * the store of KYC users that the interface reads and the SDK's widget writes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KycUserJson } from '../src/upstream/shapes.ts';
import { demoKycUsers } from './data.ts';
import {
  credentialMatches,
  DelayedAnswers,
  resetConnection,
  type SandboxHandler,
  send,
  sendJson,
} from './http.ts';
import type { KycStore } from './kyc-store.ts';
import { handleSdkRequest, isSdkPath } from './sdk/api.ts';

/** Settings of the KYC handler. */
export type KycHandlerOptions = {
  /** The `x-secret-key` the interface accepts. */
  secretKey: string;
  /** The one business slug the interface knows. */
  businessSlug: string;
  /** Delay of `usr_kyc_slow`. */
  slowMs: number;
  /** The users. */
  store: KycStore;
  /** The public key the SDK's widget presents. */
  publicKey: string;
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
    if (!credentialMatches(typeof secret === 'string' ? secret : undefined, options.secretKey)) {
      sendJson(res, 401, { message: 'Invalid secret key', error: true, data: null });
      return;
    }
    const userRef = url.searchParams.get('userRef');
    if (userRef === null || userRef === '') {
      sendJson(res, 400, { message: 'userRef is required', error: true, data: null });
      return;
    }
    if (url.searchParams.get('slug') !== options.businessSlug) {
      sendJson(res, 400, { message: 'Invalid business slug', error: true, data: null });
      return;
    }

    switch (userRef) {
      case 'usr_kyc_slow':
        delayed.after(res, options.slowMs, () => sendJson(res, 200, success(slowUser())));
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

    const user = options.store.get(userRef);
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

function slowUser(): KycUserJson {
  const template = demoKycUsers().find((u) => u.userRef === 'usr_demo_tier1');
  if (template === undefined) {
    throw new Error('demo user usr_demo_tier1 is missing');
  }
  return { ...template, userRef: 'usr_kyc_slow', name: 'Slow Sandbox User' };
}
