import type { GraphQLResolveInfo, GraphQLScalarType, GraphQLScalarTypeConfig } from 'graphql';
import type { UpstreamTransaction, UpstreamCustomer, UpstreamCard, UpstreamKycUser, UpstreamKycLevel, UpstreamKycCheck } from '../../model/records.ts';
import type { Money as MoneyRecord } from '../../model/money.ts';
import type { GraphQLContext } from '../../context.ts';
export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
export type Omit<T, K extends keyof T> = Pick<T, Exclude<keyof T, K>>;
export type RequireFields<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: NonNullable<T[P]> };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /**
   * An instant in time, written as ISO 8601 with an offset, e.g. `2024-01-05T15:04:05.000Z`.
   * Upstream times carry no zone; the gateway reads them in `UPSTREAM_TIME_ZONE` (default UTC).
   */
  DateTime: { input: string; output: string; }
  /**
   * An exact decimal number, written as a JSON string so that no binary floating point rounds it,
   * e.g. `"1500.50"`, `"10.125"`, `"-3"`. A minus sign, digits, and optionally a point followed by
   * digits; never an exponent.
   */
  Decimal: { input: string; output: string; }
  /** Any JSON value (object, array, string, number, boolean or null), passed through as the upstream sent it. */
  JSON: { input: unknown; output: unknown; }
  _FieldSet: { input: string; output: string; }
};

/** The card used for a card payment. Only the first six and last four digits are ever known. */
export type Card = {
  __typename?: 'Card';
  /** Card scheme as text (e.g. `Visa`). */
  cardType?: Maybe<Scalars['String']['output']>;
  /** Expiry as `MM/YY`. */
  expiry?: Maybe<Scalars['String']['output']>;
  /** Month of expiry, 1 to 12. */
  expiryMonth?: Maybe<Scalars['Int']['output']>;
  /** Year of expiry, four digits. */
  expiryYear?: Maybe<Scalars['Int']['output']>;
  /** First six digits of the card number (the issuer identification number). */
  first6?: Maybe<Scalars['String']['output']>;
  /** Last four digits of the card number. */
  last4?: Maybe<Scalars['String']['output']>;
  /** The card number masked for display, e.g. `411111******1111`. */
  masked?: Maybe<Scalars['String']['output']>;
};

/** The customer who paid. */
export type Customer = {
  __typename?: 'Customer';
  /** E-mail address of the customer. */
  email?: Maybe<Scalars['String']['output']>;
  /** Full name of the customer. */
  fullName?: Maybe<Scalars['String']['output']>;
  /** When the customer record was created. `null` with an error on this field when unreadable. */
  joinedAt?: Maybe<Scalars['DateTime']['output']>;
  /** Telephone number of the customer, digits. */
  phone?: Maybe<Scalars['String']['output']>;
};

/** The values of `extensions.code` on GraphQL errors returned by this gateway. */
export type ErrorCode =
  /** An argument is invalid (e.g. a txRef not of the form `NT-` + letters/digits). No upstream call was made. */
  | 'BAD_USER_INPUT'
  /** The token is valid but may not read this field. No upstream call was made. */
  | 'FORBIDDEN'
  /** The document does not parse. */
  | 'GRAPHQL_PARSE_FAILED'
  /** The document does not validate, or exceeds a limit. */
  | 'GRAPHQL_VALIDATION_FAILED'
  /** Anything else; the message is masked. */
  | 'INTERNAL_SERVER_ERROR'
  /** A persisted-query hash the gateway does not know (message `PersistedQueryNotFound`): send the hash with its query. */
  | 'PERSISTED_QUERY_NOT_FOUND'
  /** The caller exceeded its rate; retry after `Retry-After` seconds. */
  | 'RATE_LIMITED'
  /** No token, a bad signature or an expired token (HTTP 401 for the whole request). */
  | 'UNAUTHENTICATED'
  /** The provider refused the gateway's own credentials. */
  | 'UPSTREAM_AUTH_FAILED'
  /** The provider answered something that is not the documented JSON. */
  | 'UPSTREAM_BAD_RESPONSE'
  /** The provider did not answer within the time budget, retries included. */
  | 'UPSTREAM_TIMEOUT'
  /** The provider could not be reached, kept failing (5xx), or its circuit is open. */
  | 'UPSTREAM_UNAVAILABLE';

/** What the gateway reports about itself. */
export type GatewayInfo = {
  __typename?: 'GatewayInfo';
  /** True when the gateway talks to its built-in sandbox rather than the real provider. */
  sandbox: Scalars['Boolean']['output'];
  /** Version of the gateway. */
  version: Scalars['String']['output'];
};

/** One check within a level (e.g. `gender`). */
export type KycCheck = {
  __typename?: 'KycCheck';
  /** When the check was created. `null` with an error on this field when unreadable. */
  createdAt?: Maybe<Scalars['DateTime']['output']>;
  /** Name of the check. */
  name: Scalars['String']['output'];
  /** Whether the check passed. */
  passed: Scalars['Boolean']['output'];
  /** The data that was submitted for the check; its keys depend on the check. */
  query?: Maybe<Scalars['JSON']['output']>;
  /** The result data of the check; may be an empty object. */
  result?: Maybe<Scalars['JSON']['output']>;
  /** When the check was last updated. `null` with an error on this field when unreadable. */
  updatedAt?: Maybe<Scalars['DateTime']['output']>;
};

/** One verification level (tier) and its checks. */
export type KycLevel = {
  __typename?: 'KycLevel';
  /** The checks that belong to this level. */
  checks: Array<KycCheck>;
  /** Number of the level. */
  level: Scalars['Int']['output'];
  /** Display name of the level. */
  name?: Maybe<Scalars['String']['output']>;
  /** Slug of the level, of the form `tier_<n>`. */
  slug: Scalars['String']['output'];
  /** Whether the level is verified. */
  verified: Scalars['Boolean']['output'];
};

/** Public values to start the KYC widget: `new InitServiceKyc(publicKey, slug, userRef, name, levelSlug)`. */
export type KycSdkConfig = {
  __typename?: 'KycSdkConfig';
  /** Slug of the level to verify. */
  levelSlug: Scalars['String']['output'];
  /** Name of the end user. */
  name: Scalars['String']['output'];
  /** The business's public key (safe to show in a browser). */
  publicKey: Scalars['String']['output'];
  /** Address of the SDK script to load (type text/javascript). */
  scriptUrl: Scalars['String']['output'];
  /** Slug of the business. */
  slug: Scalars['String']['output'];
  /** The merchant's reference of the end user. */
  userRef: Scalars['ID']['output'];
};

/** An end user's identity verification. */
export type KycUser = {
  __typename?: 'KycUser';
  /** The level object whose number is `level`, or `null` when there is none. */
  currentLevel?: Maybe<KycLevel>;
  /** The user's current level (0 when none is reached). */
  level: Scalars['Int']['output'];
  /** Every level of the business, with its checks. */
  levels: Array<KycLevel>;
  /** Name of the user. */
  name?: Maybe<Scalars['String']['output']>;
  /** The merchant's reference of the end user. */
  userRef: Scalars['ID']['output'];
  /** Overall verification status. */
  verified: Scalars['Boolean']['output'];
};

/**
 * An exact amount of money in one currency, as the payment service sent it. Use it, rather than
 * the Float fields, wherever money is added, compared or stored.
 */
export type Money = {
  __typename?: 'Money';
  /**
   * The exact decimal value the payment service sent (read from its JSON text, never through a
   * binary float), written with at least the currency's minor digits: NGN `"1500.50"`, JPY
   * `"1500"`, KWD `"10.125"`. Digits beyond the minor unit, when sent, are kept (NGN `"1500.505"`).
   */
  amount: Scalars['Decimal']['output'];
  /**
   * The amount as a whole number of minor units, written as a string so that no size limit
   * applies: `"150050"` for NGN 1500.50. An amount with more digits than the currency has is
   * rounded half away from zero here (NGN 1500.505 → `"150051"`); `amount` keeps the digits.
   */
  amountMinor: Scalars['String']['output'];
  /** The currency code, the same as the transaction's `currency` (ISO 4217, in capitals). */
  currency: Scalars['String']['output'];
  /**
   * Digits after the point in the currency's minor unit (its ISO 4217 exponent): 2 for NGN and
   * USD, 0 for JPY, 3 for KWD and BHD; 2 for a code the gateway does not know.
   */
  minorUnits: Scalars['Int']['output'];
};

/** Actions that always go to the provider (never answered from a cache). */
export type Mutation = {
  __typename?: 'Mutation';
  /**
   * The payment checked against the merchant's order, fresh from the payment service (never from a
   * cache; the cache is updated with it, as `verifyTransaction` does): the status is SUCCESSFUL, the
   * amount equals the order's exactly (in the currency's minor units, never through a binary
   * float), the currency and, when given, the merchant reference match, and the payment was not
   * already confirmed for another order. `confirmed` is true only when `problems` is empty.
   *
   * The first confirmation of a payment that passes every check claims it for `order.id`, across
   * every replica (and Redis restarts, with `CACHE_URL`), for `CONFIRMATION_RETENTION_DAYS`: the
   * same order asking again gets the same answer; any other order gets
   * `ALREADY_CONFIRMED_FOR_ANOTHER_ORDER`. A check that fails claims nothing.
   *
   * Requires the scope `transactions:read`. `BAD_USER_INPUT`, with no upstream call, for a
   * malformed `txRef` or order (see `OrderInput`). An upstream failure is the usual error and
   * confirms nothing.
   */
  confirmPayment: PaymentConfirmation;
  /**
   * KYC details of one end user, always fetched fresh from the KYC service; the cache is
   * updated with them. Call this after the widget's `onSuccess`. Same access rule as `kycUser`.
   */
  refreshKycUser?: Maybe<KycUser>;
  /**
   * The transaction, always fetched fresh from the payment service (never from a cache);
   * the cache is updated with it. Call this before treating a payment as complete.
   * `null` when the payment service does not know the reference.
   * Requires the scope `transactions:read`.
   */
  verifyTransaction?: Maybe<Transaction>;
};


/** Actions that always go to the provider (never answered from a cache). */
export type MutationConfirmPaymentArgs = {
  order: OrderInput;
  txRef: Scalars['ID']['input'];
};


/** Actions that always go to the provider (never answered from a cache). */
export type MutationRefreshKycUserArgs = {
  userRef: Scalars['ID']['input'];
};


/** Actions that always go to the provider (never answered from a cache). */
export type MutationVerifyTransactionArgs = {
  txRef: Scalars['ID']['input'];
};

/**
 * The merchant's order, as the merchant's own records state it (never as the customer's browser
 * reports it).
 */
export type OrderInput = {
  /**
   * The amount the order costs, a positive decimal in plain notation with at most the currency's
   * minor digits: `"1500.50"` or `"1500.5"` or `"1500"` for NGN, `"1500"` for JPY, `"10.125"` for
   * KWD. Not `"0"`, `"-5"`, `"1e3"` or `"1500.505"` for NGN.
   */
  amount: Scalars['Decimal']['input'];
  /** The order's currency: three letters of ISO 4217 (e.g. `NGN`), compared without regard to case. */
  currency: Scalars['String']['input'];
  /** The merchant's order id: 1 to 128 characters, no control characters. One payment confirms one order id. */
  id: Scalars['ID']['input'];
  /** When given, the payment's `merchantRef` must equal it exactly (1 to 256 characters). */
  merchantRef?: InputMaybe<Scalars['String']['input']>;
};

/** The outcome of `confirmPayment`. */
export type PaymentConfirmation = {
  __typename?: 'PaymentConfirmation';
  /** True only when `problems` is empty: the payment pays this order, and only this one. Ship then. */
  confirmed: Scalars['Boolean']['output'];
  /** Every reason the payment does not confirm the order (not only the first), in the order of `PaymentProblem`; empty when confirmed. */
  problems: Array<PaymentProblem>;
  /** The payment as just fetched from the payment service; `null` when it does not know the reference (`NOT_FOUND`). */
  transaction?: Maybe<Transaction>;
};

/** Why a payment does not confirm an order. */
export type PaymentProblem =
  /** The payment was already confirmed for another order id: one payment pays one order. */
  | 'ALREADY_CONFIRMED_FOR_ANOTHER_ORDER'
  /** The amount paid is more than the order's. Compared only in the same currency. */
  | 'AMOUNT_TOO_HIGH'
  /** The amount paid is less than the order's (or the payment service reported no amount). Compared only in the same currency. */
  | 'AMOUNT_TOO_LOW'
  /** The payment is in another currency than the order's (or the payment service reported none). */
  | 'CURRENCY_MISMATCH'
  /** The order's `merchantRef` was given and is not the payment's `merchantRef`. */
  | 'MERCHANT_REF_MISMATCH'
  /** The payment service does not know the reference. */
  | 'NOT_FOUND'
  /** The payment is not SUCCESSFUL (or the payment service does not report it as succeeded): failed, pending, or a status the gateway does not know. */
  | 'NOT_SUCCESSFUL';

/** Read-only questions about payments and identity verification. */
export type Query = {
  __typename?: 'Query';
  /** The gateway's version and mode, useful to check which deployment answers. */
  gatewayInfo: GatewayInfo;
  /**
   * Everything a web page needs to start the KYC widget: public values only (never the secret key).
   * Same access rule as `kycUser`.
   */
  kycSdkConfig: KycSdkConfig;
  /**
   * KYC details of one end user of the configured business. `null` when the KYC service does
   * not know the user. A token with the scope `kyc:read` may read any user; any other valid
   * token reads only the user named by its own `sub`.
   */
  kycUser?: Maybe<KycUser>;
  /**
   * Status of one transaction, by its reference (`NT-` followed by letters and digits).
   * `null` (and no error) when the payment service does not know the reference.
   * Requires the scope `transactions:read`, or the reference in the token's `txRefs` claim.
   */
  transaction?: Maybe<Transaction>;
  /**
   * Several transactions at once, in the order asked. `null` at the position of an unknown
   * reference; an upstream failure for one reference is an error at that position only.
   * Duplicates cost one upstream call. At most 100 entries (duplicates counted).
   * Requires the scope `transactions:read`; without it, a reference not in the token's `txRefs`
   * claim is `FORBIDDEN` at its position.
   */
  transactions: Array<Maybe<Transaction>>;
};


/** Read-only questions about payments and identity verification. */
export type QueryKycSdkConfigArgs = {
  levelSlug: Scalars['String']['input'];
  name: Scalars['String']['input'];
  userRef: Scalars['ID']['input'];
};


/** Read-only questions about payments and identity verification. */
export type QueryKycUserArgs = {
  userRef: Scalars['ID']['input'];
};


/** Read-only questions about payments and identity verification. */
export type QueryTransactionArgs = {
  txRef: Scalars['ID']['input'];
};


/** Read-only questions about payments and identity verification. */
export type QueryTransactionsArgs = {
  txRefs: Array<Scalars['ID']['input']>;
};

/** The records a token without the rule's scope may read. */
export type RowRule =
  /** The end user named by the token's `sub` (their own KYC record). */
  | 'OWN_KYC_RECORD'
  /** The payments listed in the token's `txRefs` claim. */
  | 'OWN_PAYMENTS';

/** Live updates, served over Server-Sent Events. */
export type Subscription = {
  __typename?: 'Subscription';
  /**
   * Live KYC details of one end user: emits them at once, then whenever `level`, `verified` or a
   * level's or check's status changes. Fed by the KYC service's signed notifications
   * (`POST /webhooks/kyc`) and by polling as a fallback. Completes, with no error, when the watch
   * time ends (`LIVE_MAX_WATCH_SECONDS`). Same access rule as `kycUser`; `BAD_USER_INPUT` when the
   * KYC service does not know the user.
   */
  kycStatus: KycUser;
  /**
   * Live status of one transaction: emits the record at once, then whenever its status changes;
   * completes after a final status (SUCCESSFUL or FAILED). A maximum watch time ends it with an
   * error. Served over Server-Sent Events. Requires the scope `transactions:read`, or the
   * reference in the token's `txRefs` claim.
   */
  transactionStatus: Transaction;
};


/** Live updates, served over Server-Sent Events. */
export type SubscriptionKycStatusArgs = {
  userRef: Scalars['ID']['input'];
};


/** Live updates, served over Server-Sent Events. */
export type SubscriptionTransactionStatusArgs = {
  txRef: Scalars['ID']['input'];
};

/** A payment transaction as reported by the payment service. */
export type Transaction = {
  __typename?: 'Transaction';
  /**
   * Amount of the transaction in the currency's major unit, rounded half away from zero to the
   * currency's minor unit (cents for NGN, whole yen for JPY, thousandths for KWD), as a binary
   * float. For exact arithmetic use `amountMoney`.
   * @deprecated A binary float cannot hold every amount exactly: use `amountMoney` (an exact decimal string with its currency).
   */
  amount?: Maybe<Scalars['Float']['output']>;
  /**
   * Amount of the transaction, exact as the payment service sent it, with its currency and minor
   * units. `null` when the payment service sent no amount; `null` with an error on this field when
   * it sent an amount but no currency.
   */
  amountMoney?: Maybe<Money>;
  /**
   * Fee of the payment service, rounded like `amount`. Exact: `appFeeMoney`.
   * @deprecated Use `appFeeMoney` (exact).
   */
  appFee?: Maybe<Scalars['Float']['output']>;
  /** Fee of the payment service, exact (see `amountMoney`). */
  appFeeMoney?: Maybe<Money>;
  /** The card used, for card payments, masked: never more than six leading and four trailing digits. */
  card?: Maybe<Card>;
  /** URL of the page at which checkout took place. */
  checkoutPoint?: Maybe<Scalars['String']['output']>;
  /** Currency code (three letters, ISO 4217 style), in capitals. */
  currency: Scalars['String']['output'];
  /** The paying customer, when the payment service reports one. */
  customer?: Maybe<Customer>;
  /** Device fingerprint of the payer. */
  deviceFingerprint?: Maybe<Scalars['String']['output']>;
  /** The kind of event the record represents, verbatim (e.g. `PAYMENT_FAILED`). */
  event?: Maybe<Scalars['String']['output']>;
  /**
   * Fee charged to the merchant, rounded like `amount`. Exact: `merchantFeeMoney`.
   * @deprecated Use `merchantFeeMoney` (exact).
   */
  merchantFee?: Maybe<Scalars['Float']['output']>;
  /** Fee charged to the merchant, exact (see `amountMoney`). */
  merchantFeeMoney?: Maybe<Money>;
  /** Reference assigned by the merchant. */
  merchantRef?: Maybe<Scalars['String']['output']>;
  /** Free-text message about the transaction. */
  message?: Maybe<Scalars['String']['output']>;
  /** Channel of payment, verbatim (e.g. `Card`). */
  paymentChannel?: Maybe<Scalars['String']['output']>;
  /** Reference of the payment at the payment service. */
  paymentRef?: Maybe<Scalars['String']['output']>;
  /** The status exactly as the payment service sent it. */
  rawStatus: Scalars['String']['output'];
  /** The status, normalised. A status the gateway does not know is `UNKNOWN` (see `rawStatus`). */
  status: TransactionStatus;
  /** Whether the payment service reports the transaction as successful. */
  succeeded: Scalars['Boolean']['output'];
  /** Time of the transaction. `null` with an error on this field when the upstream time cannot be read. */
  timestamp?: Maybe<Scalars['DateTime']['output']>;
  /** The transaction reference, as asked. */
  txRef: Scalars['ID']['output'];
};

/** Normalised transaction status. */
export type TransactionStatus =
  /** Not paid, final (upstream FAILED, FAILURE or DECLINED). */
  | 'FAILED'
  /** Not final yet (upstream PENDING, PROCESSING or INITIATED). */
  | 'PENDING'
  /** Paid (upstream SUCCESS, SUCCESSFUL or SUCCEEDED). */
  | 'SUCCESSFUL'
  /** A status the gateway does not know; `rawStatus` holds it. Treat as not paid. */
  | 'UNKNOWN';



export type ResolverTypeWrapper<T> = Promise<T> | T;

export type ReferenceResolver<TResult, TReference, TContext> = (
      reference: TReference,
      context: TContext,
      info: GraphQLResolveInfo
    ) => Promise<TResult> | TResult;

      type ScalarCheck<T, S> = S extends true ? T : NullableCheck<T, S>;
      type NullableCheck<T, S> = Maybe<T> extends T ? Maybe<ListCheck<NonNullable<T>, S>> : ListCheck<T, S>;
      type ListCheck<T, S> = T extends (infer U)[] ? NullableCheck<U, S>[] : GraphQLRecursivePick<T, S>;
      export type GraphQLRecursivePick<T, S> = { [K in keyof T & keyof S]: ScalarCheck<T[K], S[K]> };
    

export type ResolverWithResolve<TResult, TParent, TContext, TArgs> = {
  resolve: ResolverFn<TResult, TParent, TContext, TArgs>;
};
export type Resolver<TResult, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> = ResolverFn<TResult, TParent, TContext, TArgs> | ResolverWithResolve<TResult, TParent, TContext, TArgs>;

export type ResolverFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => Promise<TResult> | TResult;

export type SubscriptionSubscribeFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => AsyncIterable<TResult> | Promise<AsyncIterable<TResult>>;

export type SubscriptionResolveFn<TResult, TParent, TContext, TArgs> = (
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => TResult | Promise<TResult>;

export interface SubscriptionSubscriberObject<TResult, TKey extends string, TParent, TContext, TArgs> {
  subscribe: SubscriptionSubscribeFn<{ [key in TKey]: TResult }, TParent, TContext, TArgs>;
  resolve?: SubscriptionResolveFn<TResult, { [key in TKey]: TResult }, TContext, TArgs>;
}

export interface SubscriptionResolverObject<TResult, TParent, TContext, TArgs> {
  subscribe: SubscriptionSubscribeFn<any, TParent, TContext, TArgs>;
  resolve: SubscriptionResolveFn<TResult, any, TContext, TArgs>;
}

export type SubscriptionObject<TResult, TKey extends string, TParent, TContext, TArgs> =
  | SubscriptionSubscriberObject<TResult, TKey, TParent, TContext, TArgs>
  | SubscriptionResolverObject<TResult, TParent, TContext, TArgs>;

export type SubscriptionResolver<TResult, TKey extends string, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> =
  | ((...args: any[]) => SubscriptionObject<TResult, TKey, TParent, TContext, TArgs>)
  | SubscriptionObject<TResult, TKey, TParent, TContext, TArgs>;

export type TypeResolveFn<TTypes, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>> = (
  parent: TParent,
  context: TContext,
  info: GraphQLResolveInfo
) => Maybe<TTypes> | Promise<Maybe<TTypes>>;

export type IsTypeOfResolverFn<T = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>> = (obj: T, context: TContext, info: GraphQLResolveInfo) => boolean | Promise<boolean>;

export type NextResolverFn<T> = () => Promise<T>;

export type DirectiveResolverFn<TResult = Record<PropertyKey, never>, TParent = Record<PropertyKey, never>, TContext = Record<PropertyKey, never>, TArgs = Record<PropertyKey, never>> = (
  next: NextResolverFn<TResult>,
  parent: TParent,
  args: TArgs,
  context: TContext,
  info: GraphQLResolveInfo
) => TResult | Promise<TResult>;

/** Mapping of federation types */
export type FederationTypes = {
  KycUser: KycUser;
  Transaction: Transaction;
};

/** Mapping of federation reference types */
export type FederationReferenceTypes = {
  KycUser:
    ( { __typename: 'KycUser' }
    & GraphQLRecursivePick<FederationTypes['KycUser'], {"userRef":true}> );
  Transaction:
    ( { __typename: 'Transaction' }
    & GraphQLRecursivePick<FederationTypes['Transaction'], {"txRef":true}> );
};



/** Mapping between all available schema types and the resolvers types */
export type ResolversTypes = {
  Card: ResolverTypeWrapper<UpstreamCard>;
  Int: ResolverTypeWrapper<Scalars['Int']['output']>;
  Customer: ResolverTypeWrapper<UpstreamCustomer>;
  DateTime: ResolverTypeWrapper<Scalars['DateTime']['output']>;
  Decimal: ResolverTypeWrapper<Scalars['Decimal']['output']>;
  ErrorCode: ErrorCode;
  GatewayInfo: ResolverTypeWrapper<GatewayInfo>;
  Boolean: ResolverTypeWrapper<Scalars['Boolean']['output']>;
  JSON: ResolverTypeWrapper<Scalars['JSON']['output']>;
  KycCheck: ResolverTypeWrapper<UpstreamKycCheck>;
  KycLevel: ResolverTypeWrapper<UpstreamKycLevel>;
  KycSdkConfig: ResolverTypeWrapper<KycSdkConfig>;
  ID: ResolverTypeWrapper<Scalars['ID']['output']>;
  KycUser: ResolverTypeWrapper<UpstreamKycUser>;
  Money: ResolverTypeWrapper<MoneyRecord>;
  Mutation: ResolverTypeWrapper<Record<PropertyKey, never>>;
  OrderInput: OrderInput;
  PaymentConfirmation: ResolverTypeWrapper<Omit<PaymentConfirmation, 'transaction'> & { transaction?: Maybe<ResolversTypes['Transaction']> }>;
  PaymentProblem: PaymentProblem;
  Query: ResolverTypeWrapper<Record<PropertyKey, never>>;
  RowRule: RowRule;
  Subscription: ResolverTypeWrapper<Record<PropertyKey, never>>;
  Transaction: ResolverTypeWrapper<UpstreamTransaction>;
  Float: ResolverTypeWrapper<Scalars['Float']['output']>;
  TransactionStatus: TransactionStatus;
  String: ResolverTypeWrapper<Scalars['String']['output']>;
};

/** Mapping between all available schema types and the resolvers parents */
export type ResolversParentTypes = {
  Card: UpstreamCard;
  Int: Scalars['Int']['output'];
  Customer: UpstreamCustomer;
  DateTime: Scalars['DateTime']['output'];
  Decimal: Scalars['Decimal']['output'];
  GatewayInfo: GatewayInfo;
  Boolean: Scalars['Boolean']['output'];
  JSON: Scalars['JSON']['output'];
  KycCheck: UpstreamKycCheck;
  KycLevel: UpstreamKycLevel;
  KycSdkConfig: KycSdkConfig;
  ID: Scalars['ID']['output'];
  KycUser: UpstreamKycUser;
  Money: MoneyRecord;
  Mutation: Record<PropertyKey, never>;
  OrderInput: OrderInput;
  PaymentConfirmation: Omit<PaymentConfirmation, 'transaction'> & { transaction?: Maybe<ResolversParentTypes['Transaction']> };
  Query: Record<PropertyKey, never>;
  Subscription: Record<PropertyKey, never>;
  Transaction: UpstreamTransaction;
  Float: Scalars['Float']['output'];
  String: Scalars['String']['output'];
};

export type PersonalDataDirectiveArgs = { };

export type PersonalDataDirectiveResolver<Result, Parent, ContextType = GraphQLContext, Args = PersonalDataDirectiveArgs> = DirectiveResolverFn<Result, Parent, ContextType, Args>;

export type RowRuleDirectiveArgs = {
  anyWith: Scalars['String']['input'];
  by: Scalars['String']['input'];
  rule: RowRule;
};

export type RowRuleDirectiveResolver<Result, Parent, ContextType = GraphQLContext, Args = RowRuleDirectiveArgs> = DirectiveResolverFn<Result, Parent, ContextType, Args>;

export type CardResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Card'] = ResolversParentTypes['Card']> = {
  cardType?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  expiry?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  expiryMonth?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
  expiryYear?: Resolver<Maybe<ResolversTypes['Int']>, ParentType, ContextType>;
  first6?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  last4?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  masked?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
};

export type CustomerResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Customer'] = ResolversParentTypes['Customer']> = {
  email?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  fullName?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  joinedAt?: Resolver<Maybe<ResolversTypes['DateTime']>, ParentType, ContextType>;
  phone?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
};

export interface DateTimeScalarConfig extends GraphQLScalarTypeConfig<ResolversTypes['DateTime'], any> {
  name: 'DateTime';
}

export interface DecimalScalarConfig extends GraphQLScalarTypeConfig<ResolversTypes['Decimal'], any> {
  name: 'Decimal';
}

export type GatewayInfoResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['GatewayInfo'] = ResolversParentTypes['GatewayInfo']> = {
  sandbox?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  version?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
};

export interface JsonScalarConfig extends GraphQLScalarTypeConfig<ResolversTypes['JSON'], any> {
  name: 'JSON';
}

export type KycCheckResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['KycCheck'] = ResolversParentTypes['KycCheck']> = {
  createdAt?: Resolver<Maybe<ResolversTypes['DateTime']>, ParentType, ContextType>;
  name?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  passed?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  query?: Resolver<Maybe<ResolversTypes['JSON']>, ParentType, ContextType>;
  result?: Resolver<Maybe<ResolversTypes['JSON']>, ParentType, ContextType>;
  updatedAt?: Resolver<Maybe<ResolversTypes['DateTime']>, ParentType, ContextType>;
};

export type KycLevelResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['KycLevel'] = ResolversParentTypes['KycLevel']> = {
  checks?: Resolver<Array<ResolversTypes['KycCheck']>, ParentType, ContextType>;
  level?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  name?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  slug?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  verified?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
};

export type KycSdkConfigResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['KycSdkConfig'] = ResolversParentTypes['KycSdkConfig']> = {
  levelSlug?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  name?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  publicKey?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  scriptUrl?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  slug?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  userRef?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
};

export type KycUserResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['KycUser'] = ResolversParentTypes['KycUser'], FederationReferenceType extends FederationReferenceTypes['KycUser'] = FederationReferenceTypes['KycUser']> = {
  __resolveReference?: ReferenceResolver<Maybe<ResolversTypes['KycUser']> | FederationReferenceType, FederationReferenceType, ContextType>;
  currentLevel?: Resolver<Maybe<ResolversTypes['KycLevel']>, ParentType, ContextType>;
  level?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
  levels?: Resolver<Array<ResolversTypes['KycLevel']>, ParentType, ContextType>;
  name?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  userRef?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
  verified?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
};

export type MoneyResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Money'] = ResolversParentTypes['Money']> = {
  amount?: Resolver<ResolversTypes['Decimal'], ParentType, ContextType>;
  amountMinor?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  currency?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  minorUnits?: Resolver<ResolversTypes['Int'], ParentType, ContextType>;
};

export type MutationResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Mutation'] = ResolversParentTypes['Mutation']> = {
  confirmPayment?: Resolver<ResolversTypes['PaymentConfirmation'], ParentType, ContextType, RequireFields<MutationConfirmPaymentArgs, 'order' | 'txRef'>>;
  refreshKycUser?: Resolver<Maybe<ResolversTypes['KycUser']>, ParentType, ContextType, RequireFields<MutationRefreshKycUserArgs, 'userRef'>>;
  verifyTransaction?: Resolver<Maybe<ResolversTypes['Transaction']>, ParentType, ContextType, RequireFields<MutationVerifyTransactionArgs, 'txRef'>>;
};

export type PaymentConfirmationResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['PaymentConfirmation'] = ResolversParentTypes['PaymentConfirmation']> = {
  confirmed?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  problems?: Resolver<Array<ResolversTypes['PaymentProblem']>, ParentType, ContextType>;
  transaction?: Resolver<Maybe<ResolversTypes['Transaction']>, ParentType, ContextType>;
};

export type QueryResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Query'] = ResolversParentTypes['Query']> = {
  gatewayInfo?: Resolver<ResolversTypes['GatewayInfo'], ParentType, ContextType>;
  kycSdkConfig?: Resolver<ResolversTypes['KycSdkConfig'], ParentType, ContextType, RequireFields<QueryKycSdkConfigArgs, 'levelSlug' | 'name' | 'userRef'>>;
  kycUser?: Resolver<Maybe<ResolversTypes['KycUser']>, ParentType, ContextType, RequireFields<QueryKycUserArgs, 'userRef'>>;
  transaction?: Resolver<Maybe<ResolversTypes['Transaction']>, ParentType, ContextType, RequireFields<QueryTransactionArgs, 'txRef'>>;
  transactions?: Resolver<Array<Maybe<ResolversTypes['Transaction']>>, ParentType, ContextType, RequireFields<QueryTransactionsArgs, 'txRefs'>>;
};

export type SubscriptionResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Subscription'] = ResolversParentTypes['Subscription']> = {
  kycStatus?: SubscriptionResolver<ResolversTypes['KycUser'], "kycStatus", ParentType, ContextType, RequireFields<SubscriptionKycStatusArgs, 'userRef'>>;
  transactionStatus?: SubscriptionResolver<ResolversTypes['Transaction'], "transactionStatus", ParentType, ContextType, RequireFields<SubscriptionTransactionStatusArgs, 'txRef'>>;
};

export type TransactionResolvers<ContextType = GraphQLContext, ParentType extends ResolversParentTypes['Transaction'] = ResolversParentTypes['Transaction'], FederationReferenceType extends FederationReferenceTypes['Transaction'] = FederationReferenceTypes['Transaction']> = {
  __resolveReference?: ReferenceResolver<Maybe<ResolversTypes['Transaction']> | FederationReferenceType, FederationReferenceType, ContextType>;
  amount?: Resolver<Maybe<ResolversTypes['Float']>, ParentType, ContextType>;
  amountMoney?: Resolver<Maybe<ResolversTypes['Money']>, ParentType, ContextType>;
  appFee?: Resolver<Maybe<ResolversTypes['Float']>, ParentType, ContextType>;
  appFeeMoney?: Resolver<Maybe<ResolversTypes['Money']>, ParentType, ContextType>;
  card?: Resolver<Maybe<ResolversTypes['Card']>, ParentType, ContextType>;
  checkoutPoint?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  currency?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  customer?: Resolver<Maybe<ResolversTypes['Customer']>, ParentType, ContextType>;
  deviceFingerprint?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  event?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  merchantFee?: Resolver<Maybe<ResolversTypes['Float']>, ParentType, ContextType>;
  merchantFeeMoney?: Resolver<Maybe<ResolversTypes['Money']>, ParentType, ContextType>;
  merchantRef?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  message?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  paymentChannel?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  paymentRef?: Resolver<Maybe<ResolversTypes['String']>, ParentType, ContextType>;
  rawStatus?: Resolver<ResolversTypes['String'], ParentType, ContextType>;
  status?: Resolver<ResolversTypes['TransactionStatus'], ParentType, ContextType>;
  succeeded?: Resolver<ResolversTypes['Boolean'], ParentType, ContextType>;
  timestamp?: Resolver<Maybe<ResolversTypes['DateTime']>, ParentType, ContextType>;
  txRef?: Resolver<ResolversTypes['ID'], ParentType, ContextType>;
};

export type Resolvers<ContextType = GraphQLContext> = {
  Card?: CardResolvers<ContextType>;
  Customer?: CustomerResolvers<ContextType>;
  DateTime?: GraphQLScalarType;
  Decimal?: GraphQLScalarType;
  GatewayInfo?: GatewayInfoResolvers<ContextType>;
  JSON?: GraphQLScalarType;
  KycCheck?: KycCheckResolvers<ContextType>;
  KycLevel?: KycLevelResolvers<ContextType>;
  KycSdkConfig?: KycSdkConfigResolvers<ContextType>;
  KycUser?: KycUserResolvers<ContextType>;
  Money?: MoneyResolvers<ContextType>;
  Mutation?: MutationResolvers<ContextType>;
  PaymentConfirmation?: PaymentConfirmationResolvers<ContextType>;
  Query?: QueryResolvers<ContextType>;
  Subscription?: SubscriptionResolvers<ContextType>;
  Transaction?: TransactionResolvers<ContextType>;
};

export type DirectiveResolvers<ContextType = GraphQLContext> = {
  personalData?: PersonalDataDirectiveResolver<any, any, ContextType>;
  rowRule?: RowRuleDirectiveResolver<any, any, ContextType>;
};
