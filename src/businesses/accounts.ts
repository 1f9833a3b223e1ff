/**
 * The businesses a gateway serves: each one provider account (access token, KYC secret and public
 * keys, slug, webhook secret). One, from the single-business settings, unless `BUSINESSES_FILE`
 * names a file of them:
 *
 *   { "businesses": [ { "id": "shop-a", "paymentAccessToken": { "env": "SHOP_A_TOKEN" }, … } ] }
 *
 * Any value may be `{ "env": "NAME" }`, read from the environment, so that the file itself need
 * hold no secret (a mounted ConfigMap beside a Secret's variables). The file is read at start and
 * again on `SIGHUP`; whatever is wrong with it is said naming the file, the business and the
 * field, never a value.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, type Env } from '../settings.ts';

/** One business's provider account. */
export interface BusinessAccount {
  id: string;
  paymentAccessToken: string;
  kycSecretKey: string;
  kycPublicKey: string;
  kycBusinessSlug: string;
  /** Its notifications' keys, current first; empty: its webhook paths answer 404. */
  webhookSecrets: readonly string[];
}

/** Letters, digits, `-` or `_`, 1 to 64: a business id (in paths, keys, labels and logs). */
export const BUSINESS_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** The provider's slug syntax, as `KYC_BUSINESS_SLUG` reads it. */
const SLUG = /^[A-Za-z0-9._-]{1,128}$/;
/** A variable's name, as `{ "env": "NAME" }` gives it. */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Most businesses one file may list: the `business` label of every metric is bounded by it. */
export const MAX_BUSINESSES = 1000;

const FIELDS = [
  'id',
  'paymentAccessToken',
  'kycSecretKey',
  'kycPublicKey',
  'kycBusinessSlug',
  'webhookSecret',
] as const;
type Field = (typeof FIELDS)[number];
const REQUIRED: readonly Field[] = FIELDS.filter((field) => field !== 'webhookSecret');

/** What each field must be, said without its value. */
const RULES: Record<Field, { check: (value: string) => boolean; says: string }> = {
  id: { check: (v) => BUSINESS_ID.test(v), says: "must be 1-64 letters, digits, '-' or '_'" },
  paymentAccessToken: { check: (v) => v.length > 0, says: 'must not be empty' },
  kycSecretKey: { check: (v) => v.length > 0, says: 'must not be empty' },
  kycPublicKey: { check: (v) => v.length > 0, says: 'must not be empty' },
  kycBusinessSlug: {
    check: (v) => SLUG.test(v),
    says: "must be 1-128 letters, digits, '.', '_' or '-'",
  },
  webhookSecret: {
    check: (v) => Buffer.byteLength(v, 'utf8') >= 16,
    says: 'must be at least 16 bytes long (e.g. from `openssl rand -hex 32`)',
  },
};

/** The refusal of one business's field: the file, the business (or its position) and the field. */
function refuse(file: string, business: string, field: string, message: string): never {
  throw new ConfigError('BUSINESSES_FILE', `${file}: ${business}, field "${field}" ${message}`);
}

/**
 * Reads the businesses of `file`, each value inline or from `env`.
 * @throws ConfigError naming the file, the business and the field (never a value).
 */
export function readBusinessesFile(file: string, env: Env): BusinessAccount[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError(
      'BUSINESSES_FILE',
      `${file}: cannot be read (${typeof code === 'string' ? code : 'unreadable'})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError('BUSINESSES_FILE', `${file}: is not JSON`);
  }
  const list =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>).businesses
      : undefined;
  if (!Array.isArray(list)) {
    throw new ConfigError('BUSINESSES_FILE', `${file}: must be { "businesses": [ … ] }`);
  }
  if (list.length === 0) {
    throw new ConfigError('BUSINESSES_FILE', `${file}: lists no business`);
  }
  if (list.length > MAX_BUSINESSES) {
    throw new ConfigError(
      'BUSINESSES_FILE',
      `${file}: lists ${list.length} businesses; at most ${MAX_BUSINESSES}`,
    );
  }
  const seen = new Set<string>();
  return list.map((entry, index) => {
    const position = `business #${index + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      refuse(file, position, 'id', 'is missing: each business is an object');
    }
    const fields = entry as Record<string, unknown>;
    // The id names the business in every later message; until it is known, its position does.
    const id = value(file, position, 'id', fields.id, env);
    if (id === undefined) refuse(file, position, 'id', 'is missing');
    if (!RULES.id.check(id)) refuse(file, position, 'id', RULES.id.says);
    const business = `business "${id}"`;
    if (seen.has(id)) refuse(file, business, 'id', 'is listed twice');
    seen.add(id);
    for (const name of Object.keys(fields)) {
      if (!(FIELDS as readonly string[]).includes(name)) {
        refuse(file, business, name, `is not a field (the fields: ${FIELDS.join(', ')})`);
      }
    }
    const read: Partial<Record<Field, string>> = { id };
    for (const field of FIELDS) {
      if (field === 'id') continue;
      const text = value(file, business, field, fields[field], env);
      if (text === undefined) {
        if (REQUIRED.includes(field)) refuse(file, business, field, 'is missing');
        continue;
      }
      if (!RULES[field].check(text)) refuse(file, business, field, RULES[field].says);
      read[field] = text;
    }
    return {
      id,
      paymentAccessToken: read.paymentAccessToken ?? '',
      kycSecretKey: read.kycSecretKey ?? '',
      kycPublicKey: read.kycPublicKey ?? '',
      kycBusinessSlug: read.kycBusinessSlug ?? '',
      webhookSecrets: read.webhookSecret === undefined ? [] : [read.webhookSecret],
    };
  });
}

/** A field's text: inline, or from the variable `{ "env": "NAME" }` names; undefined when absent. */
function value(
  file: string,
  business: string,
  field: string,
  raw: unknown,
  env: Env,
): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return raw.trim() === '' ? undefined : raw.trim();
  if (typeof raw === 'object' && !Array.isArray(raw)) {
    const keys = Object.keys(raw);
    const name = (raw as { env?: unknown }).env;
    if (keys.length === 1 && typeof name === 'string' && VARIABLE.test(name)) {
      const text = env[name]?.trim();
      if (text === undefined || text === '') {
        refuse(file, business, field, `names the variable ${name}, which is not set`);
      }
      return text;
    }
  }
  return refuse(file, business, field, 'must be a string or { "env": "VARIABLE_NAME" }');
}

/** Whether two accounts are the same in every field (a reload keeps what did not change). */
export function sameAccount(a: BusinessAccount, b: BusinessAccount): boolean {
  return (
    a.id === b.id &&
    a.paymentAccessToken === b.paymentAccessToken &&
    a.kycSecretKey === b.kycSecretKey &&
    a.kycPublicKey === b.kycPublicKey &&
    a.kycBusinessSlug === b.kycBusinessSlug &&
    a.webhookSecrets.length === b.webhookSecrets.length &&
    a.webhookSecrets.every((secret, i) => secret === b.webhookSecrets[i])
  );
}
