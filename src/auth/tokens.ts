/**
 * Verification of client tokens with jose: HS256 with `AUTH_JWT_SECRET`, or RS256/ES256 from
 * `AUTH_JWKS_URL`. The algorithm list is pinned per key, so `alg: none` and algorithm confusion
 * (an HS256 token keyed with a public key) are refused.
 */
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';
import { LRUCache } from 'lru-cache';
import type { AuthConfig } from '../config.ts';
import { UnauthenticatedError } from '../errors.ts';
import { UNCHECKED_VIEWER, type Viewer } from './viewer.ts';

const SYMMETRIC = ['HS256'];
/** Longest time a verified token is remembered without checking its signature again. */
const REMEMBER_MS = 5 * 60_000;
const ASYMMETRIC = ['RS256', 'ES256'];

/** Turns the Authorization header of a request into a Viewer, or throws UNAUTHENTICATED. */
export type Authenticator = (authorization: string | null) => Promise<Viewer>;

function scopesOf(payload: JWTPayload): Set<string> {
  const scope = payload.scope;
  if (typeof scope === 'string') return new Set(scope.split(' ').filter(Boolean));
  // Some issuers send an array (`scp`-style); accept it under the same claim name.
  if (Array.isArray(scope)) return new Set(scope.filter((s): s is string => typeof s === 'string'));
  return new Set();
}

/** Builds the authenticator for the configured mode. */
export function createAuthenticator(config: AuthConfig): Authenticator {
  if (config.mode === 'disabled') return async () => UNCHECKED_VIEWER;
  const secret =
    config.jwtSecret === undefined ? undefined : new TextEncoder().encode(config.jwtSecret);
  const jwks =
    config.jwksUrl === undefined ? undefined : createRemoteJWKSet(new URL(config.jwksUrl));
  const claims = {
    ...(config.issuer !== undefined && { issuer: config.issuer }),
    ...(config.audience !== undefined && { audience: config.audience }),
  };

  // Verified tokens, remembered until they expire (at most a few minutes, so that a key
  // removed from the JWKS stops being honoured soon): a signature check per request showed in
  // profiles. Only successes are remembered.
  const verified = new LRUCache<string, { viewer: Viewer; until: number }>({ max: 10_000 });

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
      const viewer: Viewer = {
        subject: typeof payload.sub === 'string' ? payload.sub : undefined,
        scopes: scopesOf(payload),
      };
      const expires =
        typeof payload.exp === 'number' ? payload.exp * 1000 : Number.POSITIVE_INFINITY;
      verified.set(token, { viewer, until: Math.min(expires, Date.now() + REMEMBER_MS) });
      return viewer;
    } catch (error) {
      if (error instanceof UnauthenticatedError) throw error;
      if (error instanceof errors.JWTExpired)
        throw new UnauthenticatedError('The token has expired.');
      throw new UnauthenticatedError('The token is not valid.');
    }
  };
}

/** Signs an HS256 token (sandbox mode's ready token, and tests). */
export function signToken(
  secret: string,
  claims: { sub: string; scope?: string },
  expiresIn = '12h',
): Promise<string> {
  return new SignJWT(claims.scope === undefined ? {} : { scope: claims.scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}
