/**
 * All resolvers: one file per root field, one per object type that needs more than graphql's
 * default resolvers (records are normalized to the schema's field names when they arrive).
 */
import type { Resolvers } from '../generated/resolvers-types.ts';
import { DateTime } from '../scalars/DateTime.ts';
import { DecimalScalar } from '../scalars/Decimal.ts';
import { JSONScalar } from '../scalars/JSON.ts';
import { confirmPayment } from './Mutation/confirmPayment.ts';
import { refreshKycUser } from './Mutation/refreshKycUser.ts';
import { verifyTransaction } from './Mutation/verifyTransaction.ts';
import { gatewayInfo } from './Query/gatewayInfo.ts';
import { kycSdkConfig } from './Query/kycSdkConfig.ts';
import { kycUser } from './Query/kycUser.ts';
import { transaction } from './Query/transaction.ts';
import { transactions } from './Query/transactions.ts';
import { kycStatus } from './Subscription/kycStatus.ts';
import { transactionStatus } from './Subscription/transactionStatus.ts';
import { Customer } from './types/Customer.ts';
import { KycCheck } from './types/KycCheck.ts';
import { KycUser } from './types/KycUser.ts';
import { Transaction } from './types/Transaction.ts';

export const resolvers: Resolvers = {
  DateTime,
  Decimal: DecimalScalar,
  JSON: JSONScalar,
  Query: { gatewayInfo, transaction, transactions, kycUser, kycSdkConfig },
  Mutation: { verifyTransaction, confirmPayment, refreshKycUser },
  Subscription: { transactionStatus, kycStatus },
  Transaction,
  Customer,
  KycUser,
  KycCheck,
};
