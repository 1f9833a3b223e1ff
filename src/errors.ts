import { GraphQLError, type GraphQLFormattedError } from 'graphql';

import { ErrorCode } from './graphql/generated/enums.ts';

/** The `extensions.code` values: the SDL's `ErrorCode` enum is their one list. */
export { ErrorCode };

/** Which REST interface an upstream error concerns; named in messages, never its URL. */
export type UpstreamName = 'payment' | 'kyc';

const UPSTREAM_LABEL: Record<UpstreamName, string> = {
  payment: 'payment service',
  kyc: 'KYC service',
};

/**
 * An expected failure with an `ErrorCode`. Yoga passes these through error masking, so the
 * message must be safe to show: no upstream URL, body, header or credential ever goes in.
 */
export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, extensions: Record<string, unknown> = {}) {
    super(message, { extensions: { ...extensions, code } });
    this.code = code;
  }
}

export class BadUserInputError extends GatewayError {
  constructor(message: string) {
    super('BAD_USER_INPUT', message);
  }
}

/** Stops the whole request with HTTP 401. */
export class UnauthenticatedError extends GatewayError {
  constructor(message = 'A valid bearer token is required.') {
    super('UNAUTHENTICATED', message, {
      http: { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } },
    });
  }
}

export class ForbiddenError extends GatewayError {
  constructor(message: string) {
    super('FORBIDDEN', message);
  }
}

export class RateLimitedError extends GatewayError {
  constructor(retryAfterSeconds: number) {
    super('RATE_LIMITED', `Too many requests; retry after ${retryAfterSeconds} s.`, {
      retryAfter: retryAfterSeconds,
      http: { status: 429, headers: { 'Retry-After': String(retryAfterSeconds) } },
    });
  }
}

/** Base of the errors that come from one upstream; `upstream` names it in extensions. */
export class UpstreamError extends GatewayError {
  readonly upstream: UpstreamName;
  constructor(
    code: ErrorCode,
    upstream: UpstreamName,
    message: string,
    extensions: Record<string, unknown> = {},
  ) {
    super(code, `The ${UPSTREAM_LABEL[upstream]} ${message}`, { ...extensions, upstream });
    this.upstream = upstream;
  }
}

export class UpstreamTimeoutError extends UpstreamError {
  constructor(upstream: UpstreamName, budgetMs: number) {
    super('UPSTREAM_TIMEOUT', upstream, `did not answer within ${budgetMs} ms.`);
  }
}

export class UpstreamUnavailableError extends UpstreamError {
  constructor(upstream: UpstreamName, reason: string, retryAfterSeconds?: number) {
    super(
      'UPSTREAM_UNAVAILABLE',
      upstream,
      `is unavailable (${reason}).`,
      retryAfterSeconds === undefined ? {} : { retryAfter: retryAfterSeconds },
    );
  }
}

export class UpstreamAuthFailedError extends UpstreamError {
  constructor(upstream: UpstreamName, status: number) {
    super(
      'UPSTREAM_AUTH_FAILED',
      upstream,
      `refused the gateway's credentials (HTTP ${status}); check the gateway's configuration.`,
    );
  }
}

export class UpstreamBadResponseError extends UpstreamError {
  constructor(upstream: UpstreamName, reason: string) {
    super('UPSTREAM_BAD_RESPONSE', upstream, `sent an answer the gateway cannot use: ${reason}.`);
  }
}

/** The error a request of its own makes (before or beside execution): its code and HTTP status. */
export function requestError(
  message: string,
  code: string,
  status: number,
  headers?: Record<string, string>,
): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code, http: { status, ...(headers && { headers }) } },
  });
}

/** Extensions never shown to a client, on any transport. */
const INTERNAL_EXTENSIONS = ['http', 'exception', 'stacktrace', 'originalError', 'unexpected'];

/** One error as a client sees it, the same on every transport: no internal extension. */
export function publicError(error: GraphQLError): GraphQLFormattedError {
  const extensions: Record<string, unknown> = { ...(error.extensions ?? {}) };
  for (const name of INTERNAL_EXTENSIONS) delete extensions[name];
  return {
    message: error.message,
    ...(error.locations && { locations: error.locations }),
    ...(error.path && { path: error.path }),
    ...(Object.keys(extensions).length > 0 && { extensions }),
  };
}
