/**
 * `npm run codegen`: server resolver types (each schema type mapped to the normalized record
 * that src/upstream/shapes.ts makes of the upstream JSON) and typed documents for the project's
 * own operations (tests, web page, other teams).
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema/*.graphql',
  // The tests' operations, and the /kyc page's (web/kyc/operations.graphql).
  documents: ['test/operations/**/*.graphql', 'web/**/*.graphql'],
  emitLegacyCommonJSImports: false,
  generates: {
    // The schema's enums as values too (the list of error codes lives only in the SDL).
    'src/graphql/generated/enums.ts': {
      plugins: ['typescript'],
      config: {
        onlyEnums: true,
        enumsAsConst: true,
        namingConvention: { enumValues: 'keep' },
      },
    },
    'src/graphql/generated/resolvers-types.ts': {
      plugins: ['typescript', 'typescript-resolvers'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        useIndexSignature: false,
        strictScalars: true,
        contextType: '../../context.ts#GraphQLContext',
        // `__resolveReference` typed for the federation entities (@key in schema/).
        federation: true,
        scalars: {
          ID: { input: 'string', output: 'string' },
          DateTime: { input: 'string', output: 'string' },
          Decimal: { input: 'string', output: 'string' },
          JSON: { input: 'unknown', output: 'unknown' },
          // The federation spec's field-set scalar, which `federation: true` declares.
          _FieldSet: { input: 'string', output: 'string' },
        },
        mappers: {
          Transaction: '../../model/records.ts#UpstreamTransaction',
          Customer: '../../model/records.ts#UpstreamCustomer',
          Card: '../../model/records.ts#UpstreamCard',
          Money: '../../model/money.ts#Money as MoneyRecord',
          KycUser: '../../model/records.ts#UpstreamKycUser',
          KycLevel: '../../model/records.ts#UpstreamKycLevel',
          KycCheck: '../../model/records.ts#UpstreamKycCheck',
        },
      },
    },
    'src/client/generated/': {
      preset: 'client',
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: {
          ID: 'string',
          DateTime: 'string',
          Decimal: 'string',
          JSON: 'unknown',
        },
      },
      presetConfig: { fragmentMasking: false, persistedDocuments: { mode: 'embedHashInDocument' } },
    },
  },
};

export default config;
