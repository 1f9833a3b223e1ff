/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query KycUser($userRef: ID!) {\n  kycUser(userRef: $userRef) {\n    ...KycUserFields\n  }\n}\n\nmutation RefreshKycUser($userRef: ID!) {\n  refreshKycUser(userRef: $userRef) {\n    ...KycUserFields\n  }\n}\n\nquery KycSdkConfig($userRef: ID!, $name: String!, $levelSlug: String!) {\n  kycSdkConfig(userRef: $userRef, name: $name, levelSlug: $levelSlug) {\n    scriptUrl\n    publicKey\n    slug\n    userRef\n    name\n    levelSlug\n  }\n}\n\nfragment KycLevelFields on KycLevel {\n  level\n  name\n  slug\n  verified\n  checks {\n    name\n    passed\n    query\n    result\n    createdAt\n    updatedAt\n  }\n}\n\nfragment KycUserFields on KycUser {\n  userRef\n  name\n  verified\n  level\n  levels {\n    ...KycLevelFields\n  }\n  currentLevel {\n    ...KycLevelFields\n  }\n}": typeof types.KycUserDocument,
    "query Transaction($txRef: ID!) {\n  transaction(txRef: $txRef) {\n    ...TransactionFields\n  }\n}\n\nquery Transactions($txRefs: [ID!]!) {\n  transactions(txRefs: $txRefs) {\n    txRef\n    status\n    rawStatus\n    amount\n  }\n}\n\nmutation VerifyTransaction($txRef: ID!) {\n  verifyTransaction(txRef: $txRef) {\n    ...TransactionFields\n  }\n}\n\nfragment TransactionFields on Transaction {\n  txRef\n  event\n  status\n  rawStatus\n  succeeded\n  amount\n  appFee\n  merchantFee\n  currency\n  checkoutPoint\n  paymentRef\n  merchantRef\n  paymentChannel\n  deviceFingerprint\n  message\n  timestamp\n  customer {\n    fullName\n    email\n    phone\n    joinedAt\n  }\n  card {\n    first6\n    last4\n    expiry\n    expiryMonth\n    expiryYear\n    cardType\n    masked\n  }\n}": typeof types.TransactionDocument,
};
const documents: Documents = {
    "query KycUser($userRef: ID!) {\n  kycUser(userRef: $userRef) {\n    ...KycUserFields\n  }\n}\n\nmutation RefreshKycUser($userRef: ID!) {\n  refreshKycUser(userRef: $userRef) {\n    ...KycUserFields\n  }\n}\n\nquery KycSdkConfig($userRef: ID!, $name: String!, $levelSlug: String!) {\n  kycSdkConfig(userRef: $userRef, name: $name, levelSlug: $levelSlug) {\n    scriptUrl\n    publicKey\n    slug\n    userRef\n    name\n    levelSlug\n  }\n}\n\nfragment KycLevelFields on KycLevel {\n  level\n  name\n  slug\n  verified\n  checks {\n    name\n    passed\n    query\n    result\n    createdAt\n    updatedAt\n  }\n}\n\nfragment KycUserFields on KycUser {\n  userRef\n  name\n  verified\n  level\n  levels {\n    ...KycLevelFields\n  }\n  currentLevel {\n    ...KycLevelFields\n  }\n}": types.KycUserDocument,
    "query Transaction($txRef: ID!) {\n  transaction(txRef: $txRef) {\n    ...TransactionFields\n  }\n}\n\nquery Transactions($txRefs: [ID!]!) {\n  transactions(txRefs: $txRefs) {\n    txRef\n    status\n    rawStatus\n    amount\n  }\n}\n\nmutation VerifyTransaction($txRef: ID!) {\n  verifyTransaction(txRef: $txRef) {\n    ...TransactionFields\n  }\n}\n\nfragment TransactionFields on Transaction {\n  txRef\n  event\n  status\n  rawStatus\n  succeeded\n  amount\n  appFee\n  merchantFee\n  currency\n  checkoutPoint\n  paymentRef\n  merchantRef\n  paymentChannel\n  deviceFingerprint\n  message\n  timestamp\n  customer {\n    fullName\n    email\n    phone\n    joinedAt\n  }\n  card {\n    first6\n    last4\n    expiry\n    expiryMonth\n    expiryYear\n    cardType\n    masked\n  }\n}": types.TransactionDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query KycUser($userRef: ID!) {\n  kycUser(userRef: $userRef) {\n    ...KycUserFields\n  }\n}\n\nmutation RefreshKycUser($userRef: ID!) {\n  refreshKycUser(userRef: $userRef) {\n    ...KycUserFields\n  }\n}\n\nquery KycSdkConfig($userRef: ID!, $name: String!, $levelSlug: String!) {\n  kycSdkConfig(userRef: $userRef, name: $name, levelSlug: $levelSlug) {\n    scriptUrl\n    publicKey\n    slug\n    userRef\n    name\n    levelSlug\n  }\n}\n\nfragment KycLevelFields on KycLevel {\n  level\n  name\n  slug\n  verified\n  checks {\n    name\n    passed\n    query\n    result\n    createdAt\n    updatedAt\n  }\n}\n\nfragment KycUserFields on KycUser {\n  userRef\n  name\n  verified\n  level\n  levels {\n    ...KycLevelFields\n  }\n  currentLevel {\n    ...KycLevelFields\n  }\n}"): (typeof documents)["query KycUser($userRef: ID!) {\n  kycUser(userRef: $userRef) {\n    ...KycUserFields\n  }\n}\n\nmutation RefreshKycUser($userRef: ID!) {\n  refreshKycUser(userRef: $userRef) {\n    ...KycUserFields\n  }\n}\n\nquery KycSdkConfig($userRef: ID!, $name: String!, $levelSlug: String!) {\n  kycSdkConfig(userRef: $userRef, name: $name, levelSlug: $levelSlug) {\n    scriptUrl\n    publicKey\n    slug\n    userRef\n    name\n    levelSlug\n  }\n}\n\nfragment KycLevelFields on KycLevel {\n  level\n  name\n  slug\n  verified\n  checks {\n    name\n    passed\n    query\n    result\n    createdAt\n    updatedAt\n  }\n}\n\nfragment KycUserFields on KycUser {\n  userRef\n  name\n  verified\n  level\n  levels {\n    ...KycLevelFields\n  }\n  currentLevel {\n    ...KycLevelFields\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Transaction($txRef: ID!) {\n  transaction(txRef: $txRef) {\n    ...TransactionFields\n  }\n}\n\nquery Transactions($txRefs: [ID!]!) {\n  transactions(txRefs: $txRefs) {\n    txRef\n    status\n    rawStatus\n    amount\n  }\n}\n\nmutation VerifyTransaction($txRef: ID!) {\n  verifyTransaction(txRef: $txRef) {\n    ...TransactionFields\n  }\n}\n\nfragment TransactionFields on Transaction {\n  txRef\n  event\n  status\n  rawStatus\n  succeeded\n  amount\n  appFee\n  merchantFee\n  currency\n  checkoutPoint\n  paymentRef\n  merchantRef\n  paymentChannel\n  deviceFingerprint\n  message\n  timestamp\n  customer {\n    fullName\n    email\n    phone\n    joinedAt\n  }\n  card {\n    first6\n    last4\n    expiry\n    expiryMonth\n    expiryYear\n    cardType\n    masked\n  }\n}"): (typeof documents)["query Transaction($txRef: ID!) {\n  transaction(txRef: $txRef) {\n    ...TransactionFields\n  }\n}\n\nquery Transactions($txRefs: [ID!]!) {\n  transactions(txRefs: $txRefs) {\n    txRef\n    status\n    rawStatus\n    amount\n  }\n}\n\nmutation VerifyTransaction($txRef: ID!) {\n  verifyTransaction(txRef: $txRef) {\n    ...TransactionFields\n  }\n}\n\nfragment TransactionFields on Transaction {\n  txRef\n  event\n  status\n  rawStatus\n  succeeded\n  amount\n  appFee\n  merchantFee\n  currency\n  checkoutPoint\n  paymentRef\n  merchantRef\n  paymentChannel\n  deviceFingerprint\n  message\n  timestamp\n  customer {\n    fullName\n    email\n    phone\n    joinedAt\n  }\n  card {\n    first6\n    last4\n    expiry\n    expiryMonth\n    expiryYear\n    cardType\n    masked\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;