import type { QueryResolvers } from '../../generated/resolvers-types.ts';

export const gatewayInfo: NonNullable<QueryResolvers['gatewayInfo']> = (_, __, ctx) => ({
  version: ctx.settings.version,
  sandbox: ctx.settings.sandbox,
});
