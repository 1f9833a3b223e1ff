/**
 * The simulated KYC interface: `GET /api/v1/user/kyc` (upstream spec 4.2), the
 * stand-in of the browser SDK (spec 4.3; its endpoints are in sdk/api.ts), and
 * the store of KYC users that the interface reads and the SDK's widget writes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  demoKycUsers,
  emptyKycLevels,
  formatKycTime,
  type JsonObject,
  type UpstreamKycCheck,
  type UpstreamKycUser,
} from './data.ts';
import {
  credentialMatches,
  DelayedAnswers,
  resetConnection,
  type SandboxHandler,
  send,
  sendJson,
} from './http.ts';
import { handleSdkRequest, isSdkPath } from './sdk/api.ts';

/** A check to record on a level; `status` defaults to `true` (passed). */
export type KycCheckInput = {
  name: string;
  status?: boolean;
  query?: JsonObject;
  result?: JsonObject;
};

/** Settings of a {@link KycStore}. */
export type KycStoreOptions = {
  /** The clock of the check timestamps; default `Date.now`. */
  now?: () => number;
  /** The initial users; default a fresh copy of the demo users. */
  users?: readonly UpstreamKycUser[];
};

const LEVEL_SLUG_PATTERN = /^tier_(\d+)$/;

/**
 * The KYC users of one sandbox, in the interface's own shape. Every read and
 * write copies, so no caller can change the store (or another sandbox's) by
 * holding on to an object.
 */
export class KycStore {
  readonly #users = new Map<string, UpstreamKycUser>();
  readonly #now: () => number;

  /** Creates a store holding deep copies of `options.users` (default: the demo users). */
  constructor(options: KycStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    for (const user of options.users ?? demoKycUsers()) {
      this.#users.set(user.userRef, structuredClone(user));
    }
  }

  /** A copy of the user, or `undefined` when the store does not know the userRef. */
  get(userRef: string): UpstreamKycUser | undefined {
    const user = this.#users.get(userRef);
    return user === undefined ? undefined : structuredClone(user);
  }

  /** Whether the store knows the userRef. */
  has(userRef: string): boolean {
    return this.#users.has(userRef);
  }

  /** The userRefs the store knows, in insertion order. */
  userRefs(): string[] {
    return [...this.#users.keys()];
  }

  /**
   * Records the checks of one level of a user, as the provider does when the
   * widget's flow ends. Creates the user (levels tier_1..tier_3, none verified)
   * when unknown. The level's checks become `checks` (a check of the same name
   * as an earlier one keeps its `createdAt`); the level is verified when none
   * of them failed. The user's `level` becomes the highest level reached through
   * verified levels from tier_1 up, and `status` is true once every level is
   * verified.
   *
   * @throws RangeError when `levelSlug` is not `tier_<n>` of one of the user's levels.
   * @returns a copy of the user after the change.
   */
  recordLevel(
    userRef: string,
    levelSlug: string,
    checks: readonly KycCheckInput[],
    options: { name?: string } = {},
  ): UpstreamKycUser {
    const number = Number(LEVEL_SLUG_PATTERN.exec(levelSlug)?.[1] ?? Number.NaN);
    const existing = this.#users.get(userRef);
    const user: UpstreamKycUser = existing ?? {
      userRef,
      name: options.name ?? userRef,
      status: false,
      level: 0,
      levels: emptyKycLevels(),
    };
    const level = user.levels.find((l) => l.level === number && l.levelSlug === levelSlug);
    if (level === undefined) {
      throw new RangeError(`Unknown KYC level slug: ${levelSlug}`);
    }
    if (options.name !== undefined) {
      user.name = options.name;
    }
    const stamp = formatKycTime(this.#now());
    const earlier = new Map(level.kyc.map((c) => [c.name, c]));
    level.kyc = checks.map(
      (c): UpstreamKycCheck => ({
        name: c.name,
        status: c.status ?? true,
        query: structuredClone(c.query ?? {}),
        result: structuredClone(c.result ?? {}),
        createdAt: earlier.get(c.name)?.createdAt ?? stamp,
        updatedAt: stamp,
      }),
    );
    level.status = level.kyc.every((c) => c.status);

    const ordered = [...user.levels].sort((a, b) => a.level - b.level);
    let reached = 0;
    for (const l of ordered) {
      if (!l.status) {
        break;
      }
      reached = l.level;
    }
    user.level = reached;
    user.status = ordered.every((l) => l.status);
    this.#users.set(userRef, user);
    return structuredClone(user);
  }
}

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

function success(user: UpstreamKycUser): { message: string; error: false; data: UpstreamKycUser } {
  return { message: 'KYC details retrieved successfully', error: false, data: user };
}

function slowUser(): UpstreamKycUser {
  const template = demoKycUsers().find((u) => u.userRef === 'usr_demo_tier1');
  if (template === undefined) {
    throw new Error('demo user usr_demo_tier1 is missing');
  }
  return { ...template, userRef: 'usr_kyc_slow', name: 'Slow Sandbox User' };
}
