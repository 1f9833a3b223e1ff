/**
 * The sandbox's side of the KYC browser SDK: the script and its
 * stylesheet, and the two endpoints the widget calls from the merchant's page. Those are
 * authenticated by the business's PUBLIC key and slug, as a browser can only hold public
 * values; the secret key is never asked for, and is not known to this module.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { findByCredential, send, sendJson } from '../http.ts';
import type { KycCheckInput, KycStore } from '../kyc-store.ts';
import type {
  KycCheckOutcome,
  KycErrorCode,
  SdkApiAnswer,
  SdkLevel,
  SdkSessionData,
  SdkSessionRequest,
  SdkStep,
  SdkVerifyData,
} from './protocol.ts';

/** Path of the script, under the KYC interface's base address. */
export const SDK_SCRIPT_PATH = '/sdk/kyc.js';
const SDK_STYLE_PATH = '/sdk/kyc.css';
const SESSION_PATH = '/sdk/v1/session';
const VERIFY_PATH = '/sdk/v1/verify';

// Built from widget.ts by `npm run build:web` (committed; CI checks it is fresh).
const SCRIPT = readFileSync(new URL('./generated/kyc-sdk.js', import.meta.url), 'utf8');
const STYLE = readFileSync(new URL('./widget.css', import.meta.url), 'utf8');

/**
 * An answer that the sandbox rejects, whatever the check: eleven zeros (an ID or BVN that
 * cannot exist), or the word `reject` in any case. Documented in sandbox/README.md.
 */
export const REJECTED_ID_NUMBER = '00000000000';
const REJECTED_WORD = 'reject';

const GENDER: SdkStep = {
  check: 'gender',
  title: 'Gender',
  label: 'Your gender, as on your ID',
  kind: 'choice',
  options: [
    { value: 'female', label: 'Female' },
    { value: 'male', label: 'Male' },
  ],
};

/** The steps of each level; the level numbers and names are the interface's (data.ts). */
const LEVELS: readonly SdkLevel[] = [
  {
    level: 1,
    slug: 'tier_1',
    name: 'Basic',
    steps: [
      GENDER,
      {
        check: 'name',
        title: 'Name',
        label: 'Full name, as on your ID',
        kind: 'text',
        minLength: 2,
        maxLength: 100,
        autocomplete: 'name',
      },
    ],
  },
  {
    level: 2,
    slug: 'tier_2',
    name: 'Intermediate',
    steps: [
      {
        check: 'bvn',
        title: 'Bank Verification Number',
        label: 'BVN (11 digits)',
        hint: 'Dial *565*0# from your registered phone to see it.',
        kind: 'digits',
        minLength: 11,
        maxLength: 11,
        autocomplete: 'off',
      },
      { check: 'dob', title: 'Date of birth', label: 'Date of birth', kind: 'date' },
    ],
  },
  {
    level: 3,
    slug: 'tier_3',
    name: 'Advanced',
    steps: [
      {
        check: 'address',
        title: 'Address',
        label: 'Home address',
        kind: 'text',
        minLength: 5,
        maxLength: 200,
        autocomplete: 'street-address',
      },
      {
        check: 'document',
        title: 'ID document',
        label: 'ID document number (NIN, passport or licence)',
        kind: 'text',
        minLength: 6,
        maxLength: 20,
        autocomplete: 'off',
      },
    ],
  },
];

/** One business, as the widget sees it. */
export type SdkAccount = {
  /** The public key the widget presents (`x-public-key`) for this business. */
  publicKey: string;
  /** The business slug that goes with that key. */
  businessSlug: string;
  /** Where an accepted or rejected verification of this business is recorded. */
  store: KycStore;
};

/** Settings of the SDK endpoints. */
export type SdkApiOptions = {
  /** The businesses, told apart by their public keys (which must differ). */
  accounts: readonly SdkAccount[];
  /** The clock of `verifiedAt`. */
  now: () => number;
};

// The widget runs on the merchant's page, so every origin may call; there are no cookies,
// and the public key is what authenticates.
const CORS = { 'access-control-allow-origin': '*' };

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether the path belongs to the SDK (script, style or endpoints). */
export function isSdkPath(pathname: string): boolean {
  return pathname.startsWith('/sdk/');
}

/** Answers one request under `/sdk/`; `body` is the request body as read by the server. */
export function handleSdkRequest(
  options: SdkApiOptions,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: string,
): void {
  const { pathname } = url;
  if (pathname === SDK_SCRIPT_PATH || pathname === SDK_STYLE_PATH) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(res, 405, { message: 'Method not allowed', error: true }, { allow: 'GET' });
      return;
    }
    const script = pathname === SDK_SCRIPT_PATH;
    send(
      res,
      200,
      script ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
      script ? SCRIPT : STYLE,
      {
        'x-content-type-options': 'nosniff',
      },
    );
    return;
  }
  if (pathname !== SESSION_PATH && pathname !== VERIFY_PATH) {
    sendJson(res, 404, { message: 'Not found', error: true, data: null }, CORS);
    return;
  }
  if (req.method === 'OPTIONS') {
    // The widget sends JSON and x-public-key, so the browser asks first.
    res.writeHead(204, {
      ...CORS,
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'content-type, x-public-key',
      'access-control-max-age': '600',
      'content-length': '0',
    });
    res.end();
    return;
  }
  if (req.method !== 'POST') {
    sendJson(
      res,
      405,
      { message: 'Method not allowed', error: true, data: null },
      { ...CORS, allow: 'POST, OPTIONS' },
    );
    return;
  }

  const answer =
    pathname === SESSION_PATH ? session(options, req, body) : verify(options, req, body);
  sendJson(res, answer.status, answer.body, CORS);
}

type Answer<T> = { status: number; body: SdkApiAnswer<T> };

function failure<T>(
  status: number,
  code: KycErrorCode,
  message: string,
  checks?: KycCheckOutcome[],
): Answer<T> {
  return { status, body: { error: true, code, message, data: checks ? { checks } : null } };
}

/** Checks the credentials and the common fields; the level on success. */
function opening(
  options: SdkApiOptions,
  req: IncomingMessage,
  body: string,
):
  | { fail: Answer<never> }
  | { request: SdkSessionRequest & { answers?: unknown }; level: SdkLevel; account: SdkAccount } {
  const key = req.headers['x-public-key'];
  const account = findByCredential(
    typeof key === 'string' ? key : undefined,
    options.accounts,
    (a) => a.publicKey,
  );
  if (account === undefined) {
    return { fail: failure(401, 'INVALID_PUBLIC_KEY', 'The public key is not valid.') };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { fail: failure(400, 'INVALID_INPUT', 'The request body must be JSON.') };
  }
  if (typeof parsed !== 'object' || parsed === null) {
    return { fail: failure(400, 'INVALID_INPUT', 'The request body must be a JSON object.') };
  }
  const fields = parsed as Record<string, unknown>;
  // A public key is its business's only: another business's slug is refused as an unknown one.
  if (fields.slug !== account.businessSlug) {
    return { fail: failure(400, 'INVALID_SLUG', 'The business slug is not valid.') };
  }
  const level = LEVELS.find((l) => l.slug === fields.levelSlug);
  if (level === undefined) {
    return { fail: failure(400, 'INVALID_LEVEL', 'The level is not a level of this business.') };
  }
  const { userRef, name } = fields;
  if (!isText(userRef, 1, 128)) {
    return { fail: failure(400, 'INVALID_INPUT', 'userRef must be 1 to 128 characters.') };
  }
  if (!isText(name, 1, 200)) {
    return { fail: failure(400, 'INVALID_INPUT', 'name must be 1 to 200 characters.') };
  }
  return {
    request: {
      slug: account.businessSlug,
      userRef,
      name,
      levelSlug: level.slug,
      answers: fields.answers,
    },
    level,
    account,
  };
}

function session(
  options: SdkApiOptions,
  req: IncomingMessage,
  body: string,
): Answer<SdkSessionData> {
  const opened = opening(options, req, body);
  if ('fail' in opened) return opened.fail;
  return {
    status: 200,
    body: {
      error: false,
      message: 'Session started',
      data: { business: opened.account.businessSlug, level: structuredClone(opened.level) },
    },
  };
}

function verify(options: SdkApiOptions, req: IncomingMessage, body: string): Answer<SdkVerifyData> {
  const opened = opening(options, req, body);
  if ('fail' in opened) return opened.fail;
  const { request, level, account } = opened;
  const answers = request.answers;
  if (typeof answers !== 'object' || answers === null || Array.isArray(answers)) {
    return failure(400, 'INVALID_INPUT', 'answers must be an object keyed by check name.');
  }
  const given = answers as Record<string, unknown>;
  const checks: KycCheckInput[] = [];
  const outcomes: KycCheckOutcome[] = [];
  for (const step of level.steps) {
    const value = given[step.check];
    const problem = invalidAnswer(step, value, options.now());
    if (problem !== undefined || typeof value !== 'string') {
      return failure(400, 'INVALID_INPUT', problem ?? `${step.title}: an answer is required.`);
    }
    const answer = value.trim();
    const rejected = answer === REJECTED_ID_NUMBER || answer.toLowerCase() === REJECTED_WORD;
    const reason = rejected ? `The ${step.title.toLowerCase()} could not be verified.` : undefined;
    checks.push({
      name: step.check,
      status: !rejected,
      query: { [step.check]: answer },
      result: reason === undefined ? { match: true } : { match: false, reason },
    });
    outcomes.push({ name: step.check, passed: !rejected, ...(reason !== undefined && { reason }) });
  }

  // Rejected checks are recorded too, as the provider keeps failed attempts (the level then
  // reads unverified until a new attempt passes).
  account.store.recordLevel(request.userRef, level.slug, checks, {
    name: request.name,
  });
  const failed = outcomes.filter((o) => !o.passed);
  if (failed.length > 0) {
    const names = failed.map((o) => o.name).join(', ');
    return failure(422, 'CHECK_REJECTED', `Verification rejected: ${names}.`, outcomes);
  }
  return {
    status: 200,
    body: {
      error: false,
      message: 'Verification accepted',
      data: {
        verificationId: `kyc_ver_${randomBytes(8).toString('hex')}`,
        userRef: request.userRef,
        levelSlug: level.slug,
        level: level.level,
        levelName: level.name,
        checks: outcomes,
        verifiedAt: new Date(options.now()).toISOString(),
      },
    },
  };
}

function isText(value: unknown, min: number, max: number): value is string {
  return (
    typeof value === 'string' &&
    value.trim().length >= min &&
    value.length <= max &&
    !CONTROL.test(value)
  );
}

/** Why an answer does not fit its step, or undefined when it fits. */
function invalidAnswer(step: SdkStep, value: unknown, now: number): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    return `${step.title}: an answer is required.`;
  }
  const answer = value.trim();
  switch (step.kind) {
    case 'choice':
      return step.options?.some((o) => o.value === answer)
        ? undefined
        : `${step.title}: choose one of the options.`;
    case 'digits': {
      const length = step.minLength ?? 1;
      return new RegExp(`^\\d{${length}}$`).test(answer)
        ? undefined
        : `${step.title}: enter ${length} digits.`;
    }
    case 'date': {
      const time = /^\d{4}-\d{2}-\d{2}$/.test(answer) ? Date.parse(`${answer}T00:00:00Z`) : NaN;
      const valid =
        Number.isFinite(time) &&
        new Date(time).toISOString().startsWith(answer) &&
        time > Date.parse('1900-01-01') &&
        time < now;
      return valid ? undefined : `${step.title}: enter a past date as YYYY-MM-DD.`;
    }
    case 'text':
      return isText(answer, step.minLength ?? 1, step.maxLength ?? 200)
        ? undefined
        : `${step.title}: enter ${step.minLength ?? 1} to ${step.maxLength ?? 200} characters.`;
  }
}
