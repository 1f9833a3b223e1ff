/**
 * The fixed GraphQL documents of the benchmark, shared by the load generator (bench/run.ts,
 * bench/growth.ts) and the reference server (bench/reference.ts), plus the credentials the
 * upstream stub expects. The documents are sent with variables, as real clients do, so the text
 * of each request body stays the same apart from the references.
 */

/** The Transaction selection of the README's example query. */
const TRANSACTION_FIELDS = `txRef status rawStatus succeeded amount appFee merchantFee currency timestamp
    customer { fullName email phone joinedAt }
    card { first6 last4 masked expiry expiryMonth expiryYear cardType }`;

export const TRANSACTION_QUERY = `query Tx($txRef: ID!) {
  transaction(txRef: $txRef) {
    ${TRANSACTION_FIELDS}
  }
}`;

export const TRANSACTIONS_QUERY = `query Txs($txRefs: [ID!]!) {
  transactions(txRefs: $txRefs) {
    ${TRANSACTION_FIELDS}
  }
}`;

/** The KycUser selection of the README's example query. */
export const KYC_USER_QUERY = `query Kyc($userRef: ID!) {
  kycUser(userRef: $userRef) {
    userRef name verified level
    currentLevel { slug name verified }
    levels {
      level slug verified
      checks { name passed query result createdAt updatedAt }
    }
  }
}`;

/** What the stub accepts and the gateway and the reference send. */
export const STUB_CREDENTIALS = {
  paymentAccessToken: 'bench-payment-token-0123456789',
  kycSecretKey: 'bench-kyc-secret-0123456789',
  kycPublicKey: 'pk_bench_public',
  kycBusinessSlug: 'bench-business',
} as const;

/**
 * The credentials of business `id` in the runs with several businesses (`--businesses`): the
 * stub's own, each marked with the id, which the stub accepts as it accepts its own (a KYC slug
 * only with the secret of the same business).
 */
export function businessCredentials(id: string): {
  paymentAccessToken: string;
  kycSecretKey: string;
  kycPublicKey: string;
  kycBusinessSlug: string;
} {
  return {
    paymentAccessToken: `${STUB_CREDENTIALS.paymentAccessToken}.${id}`,
    kycSecretKey: `${STUB_CREDENTIALS.kycSecretKey}.${id}`,
    kycPublicKey: `${STUB_CREDENTIALS.kycPublicKey}_${id}`,
    kycBusinessSlug: `${STUB_CREDENTIALS.kycBusinessSlug}.${id}`,
  };
}

/** HS256 secret of the auth-on runs (at least 32 bytes). */
export const BENCH_JWT_SECRET = 'bench-jwt-secret-that-is-long-enough-for-hs256';

/** Upstream paths of the payment and KYC interfaces. */
export const PAYMENT_PATH = '/pg/api/v1/transaction/status/';
export const KYC_PATH = '/api/v1/user/kyc';

/** A GraphQL request body. */
export interface GraphQLBody {
  query: string;
  variables: Record<string, unknown>;
}

export function transactionBody(txRef: string): GraphQLBody {
  return { query: TRANSACTION_QUERY, variables: { txRef } };
}

export function transactionsBody(txRefs: string[]): GraphQLBody {
  return { query: TRANSACTIONS_QUERY, variables: { txRefs } };
}

export function kycUserBody(userRef: string): GraphQLBody {
  return { query: KYC_USER_QUERY, variables: { userRef } };
}

/** The scenarios whose every request reads new records (no cache hit). */
export type NewRecordScenario = 'S1' | 'S3' | 'S4';

/**
 * Request `n` of a scenario that reads new records: S1 one transaction, S3 twenty, S4 one KYC
 * user of 3 levels × 3 checks. `tag` (letters and digits only: `NT-` references allow nothing
 * else) keeps apart the references of loads that must not share records.
 */
export function newRecordsBody(scenario: NewRecordScenario, tag: string, n: number): GraphQLBody {
  if (scenario === 'S1') return transactionBody(`NT-GEN${tag}${n}`);
  if (scenario === 'S4') return kycUserBody(`usrbench${tag}${n}`);
  return transactionsBody(Array.from({ length: 20 }, (_, i) => `NT-GEN${tag}${n}x${i}`));
}
