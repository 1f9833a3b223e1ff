/** All resolvers: one file per root field, one per object type. */
import type { Resolvers } from '../generated/resolvers-types.ts';
import { DateTime } from '../scalars/DateTime.ts';
import { JSONScalar } from '../scalars/JSON.ts';
import { refreshKycUser } from './Mutation/refreshKycUser.ts';
import { verifyTransaction } from './Mutation/verifyTransaction.ts';
import { gatewayInfo } from './Query/gatewayInfo.ts';
import { kycSdkConfig } from './Query/kycSdkConfig.ts';
import { kycUser } from './Query/kycUser.ts';
import { transaction } from './Query/transaction.ts';
import { transactions } from './Query/transactions.ts';
import { transactionStatus } from './Subscription/transactionStatus.ts';
import { Card } from './types/Card.ts';
import { Customer } from './types/Customer.ts';
import { KycCheck } from './types/KycCheck.ts';
import { KycLevel } from './types/KycLevel.ts';
import { KycUser } from './types/KycUser.ts';
import { Transaction } from './types/Transaction.ts';

export const resolvers: Resolvers = {
  DateTime,
  JSON: JSONScalar,
  Query: { gatewayInfo, transaction, transactions, kycUser, kycSdkConfig },
  Mutation: { verifyTransaction, refreshKycUser },
  Subscription: { transactionStatus },
  Transaction,
  Customer,
  Card,
  KycUser,
  KycLevel,
  KycCheck,
};
