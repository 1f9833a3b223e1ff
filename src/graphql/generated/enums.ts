/** The values of `extensions.code` on GraphQL errors returned by this gateway. */
export const ErrorCode = {
  /** An argument is invalid (e.g. a txRef not of the form `NT-` + letters/digits). No upstream call was made. */
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  /** The token is valid but may not read this field. No upstream call was made. */
  FORBIDDEN: 'FORBIDDEN',
  /** The document does not parse. */
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  /** The document does not validate, or exceeds a limit. */
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  /** Anything else; the message is masked. */
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
  /** A persisted-query hash the gateway does not know (message `PersistedQueryNotFound`): send the hash with its query. */
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  /** The caller exceeded its rate; retry after `Retry-After` seconds. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** No token, a bad signature or an expired token (HTTP 401 for the whole request). */
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** The provider refused the gateway's own credentials. */
  UPSTREAM_AUTH_FAILED: 'UPSTREAM_AUTH_FAILED',
  /** The provider answered something that is not the documented JSON. */
  UPSTREAM_BAD_RESPONSE: 'UPSTREAM_BAD_RESPONSE',
  /** The provider did not answer within the time budget, retries included. */
  UPSTREAM_TIMEOUT: 'UPSTREAM_TIMEOUT',
  /** The provider could not be reached, kept failing (5xx), or its circuit is open. */
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE'
} as const;

export type ErrorCode = typeof ErrorCode[keyof typeof ErrorCode];
/** Why a payment does not confirm an order. */
export const PaymentProblem = {
  /** The payment was already confirmed for another order id: one payment pays one order. */
  ALREADY_CONFIRMED_FOR_ANOTHER_ORDER: 'ALREADY_CONFIRMED_FOR_ANOTHER_ORDER',
  /** The amount paid is more than the order's. Compared only in the same currency. */
  AMOUNT_TOO_HIGH: 'AMOUNT_TOO_HIGH',
  /** The amount paid is less than the order's (or the payment service reported no amount). Compared only in the same currency. */
  AMOUNT_TOO_LOW: 'AMOUNT_TOO_LOW',
  /** The payment is in another currency than the order's (or the payment service reported none). */
  CURRENCY_MISMATCH: 'CURRENCY_MISMATCH',
  /** The order's `merchantRef` was given and is not the payment's `merchantRef`. */
  MERCHANT_REF_MISMATCH: 'MERCHANT_REF_MISMATCH',
  /** The payment service does not know the reference. */
  NOT_FOUND: 'NOT_FOUND',
  /** The payment is not SUCCESSFUL (or the payment service does not report it as succeeded): failed, pending, or a status the gateway does not know. */
  NOT_SUCCESSFUL: 'NOT_SUCCESSFUL'
} as const;

export type PaymentProblem = typeof PaymentProblem[keyof typeof PaymentProblem];
/** The records a token without the rule's scope may read. */
export const RowRule = {
  /** The end user named by the token's `sub` (their own KYC record). */
  OWN_KYC_RECORD: 'OWN_KYC_RECORD',
  /** The payments listed in the token's `txRefs` claim. */
  OWN_PAYMENTS: 'OWN_PAYMENTS'
} as const;

export type RowRule = typeof RowRule[keyof typeof RowRule];
/** Normalised transaction status. */
export const TransactionStatus = {
  /** Not paid, final (upstream FAILED, FAILURE or DECLINED). */
  FAILED: 'FAILED',
  /** Not final yet (upstream PENDING, PROCESSING or INITIATED). */
  PENDING: 'PENDING',
  /** Paid (upstream SUCCESS, SUCCESSFUL or SUCCEEDED). */
  SUCCESSFUL: 'SUCCESSFUL',
  /** A status the gateway does not know; `rawStatus` holds it. Treat as not paid. */
  UNKNOWN: 'UNKNOWN'
} as const;

export type TransactionStatus = typeof TransactionStatus[keyof typeof TransactionStatus];