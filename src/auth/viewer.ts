/** Who is asking, and what they may read (scopes, or their own records). */
import { ForbiddenError } from '../errors.ts';

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
}

/** A viewer that may read nothing (requests that need no token, such as GraphiQL's page). */
export const NO_ACCESS: Viewer = { subject: undefined, scopes: new Set(), txRefs: new Set() };

/** The viewer when checking is turned off (`AUTH_DISABLED=true`, local work only). */
export const UNCHECKED_VIEWER: Viewer = {
  subject: undefined,
  scopes: new Set(ALL_SCOPES),
  txRefs: new Set(),
};

/** Throws FORBIDDEN unless the viewer may read any transaction (`verifyTransaction`). */
export function assertCanReadTransactions(viewer: Viewer): void {
  if (!viewer.scopes.has(SCOPE_TRANSACTIONS)) {
    throw new ForbiddenError(`This field needs the scope ${SCOPE_TRANSACTIONS}.`);
  }
}

/**
 * Whether the viewer may read the payment `txRef`: with `transactions:read` any, otherwise only
 * those listed in its token's `txRefs` claim. Decided before any loader, so a refusal costs no
 * upstream call.
 */
export function canReadTransaction(viewer: Viewer, txRef: string): boolean {
  return viewer.scopes.has(SCOPE_TRANSACTIONS) || viewer.txRefs.has(txRef);
}

/** The refusal of a payment the viewer may not read ({@link canReadTransaction}). */
export function transactionForbidden(): ForbiddenError {
  return new ForbiddenError(
    `This token may read only the payments listed in its txRefs claim; others need the scope ${SCOPE_TRANSACTIONS}.`,
  );
}

/** Throws FORBIDDEN unless the viewer may read the payment `txRef`. */
export function assertCanReadTransaction(viewer: Viewer, txRef: string): void {
  if (!canReadTransaction(viewer, txRef)) throw transactionForbidden();
}

/**
 * Throws FORBIDDEN unless the viewer may read this user's KYC: with `kyc:read` any user,
 * otherwise only the user named by the token's own `sub`.
 */
export function assertCanReadKyc(viewer: Viewer, userRef: string): void {
  if (viewer.scopes.has(SCOPE_KYC)) return;
  if (viewer.subject !== undefined && viewer.subject === userRef) return;
  throw new ForbiddenError(
    `This token may read only its own KYC details; reading another user's needs the scope ${SCOPE_KYC}.`,
  );
}
