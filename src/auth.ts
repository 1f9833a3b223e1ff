/**
 * Who is asking: the viewer a client token names (its subject, scopes and `txRefs` claim). What
 * each viewer may read is declared in the SDL and enforced by src/graphql/access.ts. Tokens are verified with
 * jose: HS256 with `AUTH_JWT_SECRET`, or RS256/ES256 from
 * `AUTH_JWKS_URL`. The algorithm list is pinned per key, so `alg: none` and algorithm confusion
 * (an HS256 token keyed with a public key) are refused.
 */
import { createHash } from 'node:crypto';
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import { LRUCache } from 'lru-cache';
import { BUSINESS_ID } from './businesses/accounts.ts';
import type { AuthConfig } from './config.ts';
import { UnauthenticatedError } from './errors.ts';
import { isTxRef } from './model/input.ts';

export const SCOPE_TRANSACTIONS = 'transactions:read';
export const SCOPE_KYC = 'kyc:read';
export const ALL_SCOPES = [SCOPE_TRANSACTIONS, SCOPE_KYC] as const;

export interface Viewer {
  /** The caller (`sub`); for an end user, their userRef. */
  subject: string | undefined;
  scopes: ReadonlySet<string>;
  /**
   * The payments this caller may read without `transactions:read` (the token's `txRefs`
   * claim): a merchant's backend lists the end user's own payments in the page's token.
   */
  txRefs: ReadonlySet<string>;
  /** When the token expires (epoch ms); absent when checking is off. */
  expiresAt?: number;
  /**
   * The token's own identity, the caller's key when it has no `sub`: `jti:<jti>`, else
   * `signed:<hash of its signed part>` (header and claims exactly as signed). Never the text of a
   * header: `Bearer  <token>` or a respelled signature is the same token, the same caller.
   */
  tokenId?: string;
  /**
   * The business the token names (its business claim, `AUTH_BUSINESS_CLAIM`), when several are
   * served and the claim is a well-formed id; the operation entry resolves it.
   */
  business?: string;
}

/** A viewer that may read nothing (requests that need no token, such as GraphiQL's page). */
export const NO_ACCESS: Viewer = { subject: undefined, scopes: new Set(), txRefs: new Set() };

/** The viewer when checking is turned off (`AUTH_DISABLED=true`, local work only). */
export const UNCHECKED_VIEWER: Viewer = {
  subject: undefined,
  scopes: new Set(ALL_SCOPES),
  txRefs: new Set(),
  // Nothing is verified: every request is the same caller, whatever its header says.
  tokenId: 'unchecked',
};

const SYMMETRIC = ['HS256'];
/** Longest time a verified token is remembered without checking its signature again. */
const REMEMBER_MS = 5 * 60_000;
const ASYMMETRIC = ['RS256', 'ES256'];
/** How far in the future `iat` may be (clock skew between the issuer and this gateway). */
const MAX_CLOCK_SKEW_SECONDS = 60;
/** Most references kept from a token's `txRefs` claim (a page's own payments, not a ledger). */
export const MAX_TOKEN_TX_REFS = 100;
/** Most bytes the verified tokens take (tokens, viewers and their keys, estimated). */
export const VERIFIED_TOKENS_MAX_BYTES = 16 * 1024 * 1024;
const VERIFIED_TOKENS_MAX_ENTRIES = 10_000;

/** Turns the Authorization header of a request into a Viewer, or throws UNAUTHENTICATED. */
export type Authenticator = (authorization: string | null) => Promise<Viewer>;

function scopesOf(payload: JWTPayload): Set<string> {
  const scope = payload.scope;
  // Some issuers send an array (`scp`-style); accept it under the same claim name, each element
  // split as the string form is, so "a b" means the same in either form.
  const parts = typeof scope === 'string' ? [scope] : Array.isArray(scope) ? scope : [];
  const scopes = new Set<string>();
  for (const part of parts) {
    if (typeof part !== 'string') continue;
    for (const name of part.split(' ')) if (name !== '') scopes.add(name);
  }
  return scopes;
}

/**
 * The `txRefs` claim: well-formed references only, at most {@link MAX_TOKEN_TX_REFS}. Anything
 * else (not an array, a non-string or malformed entry) grants nothing rather than failing the
 * token: the scope rules still apply.
 */
function txRefsOf(payload: JWTPayload): Set<string> {
  const claim = payload.txRefs;
  const txRefs = new Set<string>();
  if (!Array.isArray(claim)) return txRefs;
  for (const entry of claim) {
    if (txRefs.size >= MAX_TOKEN_TX_REFS) break;
    if (typeof entry === 'string' && isTxRef(entry)) txRefs.add(entry);
  }
  return txRefs;
}

/**
 * The identity of a verified token without `jti`: a hash of its signed part (`header.claims`, the
 * bytes the signature covers). Not the signature: one signed part has several signatures that
 * verify (base64url's spare bits, ECDSA's `s` and `n - s`), and anyone holding the token can make
 * them; a different signed part needs the key.
 */
function signedIdentity(token: string): string {
  const signed = token.slice(0, token.lastIndexOf('.'));
  return `signed:${createHash('sha256').update(signed).digest('base64url').slice(0, 32)}`;
}

/** A verified token, remembered until `until` (ms since the epoch). */
export interface VerifiedToken {
  viewer: Viewer;
  until: number;
}

export type VerifiedTokenCache = LRUCache<string, VerifiedToken>;

/** Rough bytes an entry holds: the token (up to a request header's size) and its viewer. */
function verifiedTokenBytes(entry: VerifiedToken, token: string): number {
  let bytes = 2 * token.length + 2 * (entry.viewer.subject?.length ?? 0) + 256;
  for (const scope of entry.viewer.scopes) bytes += 2 * scope.length + 64;
  for (const txRef of entry.viewer.txRefs) bytes += 2 * txRef.length + 64;
  return bytes;
}

/**
 * The cache of verified tokens, bounded in entries and in bytes: a token can be as large as a
 * request header, so a count alone would let large tokens take a lot of memory.
 */
export function createVerifiedTokenCache(maxBytes = VERIFIED_TOKENS_MAX_BYTES): VerifiedTokenCache {
  return new LRUCache<string, VerifiedToken>({
    max: VERIFIED_TOKENS_MAX_ENTRIES,
    maxSize: maxBytes,
    sizeCalculation: verifiedTokenBytes,
  });
}

/**
 * Builds the authenticator for the configured mode. Verified tokens are remembered in
 * `verified` until they expire (at most a few minutes, so that a key removed from the JWKS
 * stops being honoured soon): a signature check per request showed in profiles. Only
 * successes are remembered.
 */
export function createAuthenticator(
  config: AuthConfig,
  verified: VerifiedTokenCache = createVerifiedTokenCache(),
): Authenticator {
  if (config.mode === 'disabled') return async () => UNCHECKED_VIEWER;
  const secret =
    config.jwtSecret === undefined ? undefined : new TextEncoder().encode(config.jwtSecret);
  const jwks =
    config.jwksUrl === undefined ? undefined : createRemoteJWKSet(new URL(config.jwksUrl));
  const claims = {
    requiredClaims: ['exp'],
    ...(config.issuer !== undefined && { issuer: config.issuer }),
    ...(config.audience !== undefined && { audience: config.audience }),
  };

  return async (authorization) => {
    const match = authorization === null ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    const token = match?.[1];
    if (token === undefined) throw new UnauthenticatedError('A bearer token is required.');
    const known = verified.get(token);
    if (known && known.until > Date.now()) return known.viewer;
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new UnauthenticatedError('The bearer token is malformed.');
    }
    try {
      let payload: JWTPayload;
      if (alg !== undefined && SYMMETRIC.includes(alg) && secret) {
        ({ payload } = await jwtVerify(token, secret, { ...claims, algorithms: SYMMETRIC }));
      } else if (alg !== undefined && ASYMMETRIC.includes(alg) && jwks) {
        ({ payload } = await jwtVerify(token, jwks, { ...claims, algorithms: ASYMMETRIC }));
      } else {
        throw new UnauthenticatedError(
          'The token is signed with an algorithm this gateway does not accept.',
        );
      }
      // jose has checked that exp is there and not past, and that iat, if any, is a number.
      const expires = (payload.exp ?? 0) * 1000;
      if (payload.iat !== undefined && payload.iat > Date.now() / 1000 + MAX_CLOCK_SKEW_SECONDS) {
        throw new UnauthenticatedError('The token was issued in the future (iat).');
      }
      const business = config.businessClaim && payload[config.businessClaim];
      const viewer: Viewer = {
        ...(typeof business === 'string' && BUSINESS_ID.test(business) && { business }),
        subject: typeof payload.sub === 'string' ? payload.sub : undefined,
        scopes: scopesOf(payload),
        txRefs: txRefsOf(payload),
        expiresAt: expires,
        tokenId:
          typeof payload.jti === 'string' && payload.jti.length > 0 && payload.jti.length <= 128
            ? `jti:${payload.jti}`
            : signedIdentity(token),
      };
      verified.set(token, { viewer, until: Math.min(expires, Date.now() + REMEMBER_MS) });
      return viewer;
    } catch (error) {
      if (error instanceof UnauthenticatedError) throw error;
      if (error instanceof errors.JWTExpired)
        throw new UnauthenticatedError('The token has expired.');
      // A token that never expires is refused as an expired one would be.
      if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'exp')
        throw new UnauthenticatedError('The token has no expiry (exp).');
      throw new UnauthenticatedError('The token is not valid.');
    }
  };
}

/** Signs an HS256 token (sandbox mode's ready token, the /kyc page's demo token, and tests). */
export function signToken(
  secret: string,
  claims: {
    sub: string;
    scope?: string;
    txRefs?: readonly string[];
    /** The business claim, by its name (`AUTH_BUSINESS_CLAIM`) and the business's id. */
    business?: { claim: string; id: string };
  },
  expiresIn = '12h',
): Promise<string> {
  return new SignJWT({
    ...(claims.business && { [claims.business.claim]: claims.business.id }),
    ...(claims.scope !== undefined && { scope: claims.scope }),
    ...(claims.txRefs !== undefined && { txRefs: [...claims.txRefs] }),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}
