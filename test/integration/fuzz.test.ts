/**
 * Property test of the whole HTTP surface of /graphql: operations and
 * variables generated from the schema (random selections, aliases, directives, argument values
 * from the sandbox's demo and failure references, odd strings, wrong types, long lists) and
 * malformed requests (truncated documents, random bytes, deep nesting, many aliases, fragment
 * chains, wrong content types, bad JSON), sent to a real gateway over the sandbox.
 *
 * Whatever arrives, the gateway must: answer within a bounded time and never with a 5xx; answer
 * JSON when it says JSON; put an `ErrorCode` on every error and the masked message on
 * INTERNAL_SERVER_ERROR; never echo an upstream credential, a stack trace or an upstream
 * address; call the payment upstream only with well-formed references; and keep serving.
 *
 * A fixed seed by default (printed). Longer local runs:
 *   FUZZ_RUNS=5000 FUZZ_SEED=123 npx vitest run test/integration/fuzz.test.ts
 * FUZZ_SHRINK=1 shrinks a counterexample instead of reporting the first one found;
 * FUZZ_DUMP=<file> writes the whole failing request there as JSON (the report cuts it).
 */
import { writeFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLObjectType,
  getNamedType,
  isObjectType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KYC_DEMO_USERS,
  KYC_FAILURE_USERS,
  PAYMENT_DEMO_REFERENCES,
  PAYMENT_FAILURE_REFERENCES,
} from '../../sandbox/data.ts';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import { ErrorCode } from '../../src/errors.ts';
import { buildSubgraph } from '../../src/graphql/federation.ts';
import { resolvers } from '../../src/graphql/resolvers/index.ts';
import { loadTypeDefs } from '../../src/pipeline.ts';
import {
  A,
  B,
  B_MARKER,
  type BusinessesSetup,
  ownerOf,
  startBusinessesGateway,
} from '../helpers/businesses.ts';
import { advanceWallClock } from '../helpers/clock.ts';
import {
  gql,
  sandboxUpstreams,
  startGateway,
  TEST_JWT_SECRET,
  type TestGateway,
} from '../helpers/gateway.ts';
import { runOver, type Operation as WireOperation } from '../helpers/transports.ts';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20_240_405;
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1000;
const SHRINK = process.env.FUZZ_SHRINK === '1';
const DUMP = process.env.FUZZ_DUMP;
/** Longest acceptable answer: the upstream budget (800 ms) plus ample slack for a busy machine. */
const MAX_RESPONSE_MS = 4000;
/** Distinct records one request may read, and attempts per read (retries included). */
const MAX_RECORDS = 10;
const MAX_ATTEMPTS = 3;
/** Polls a subscription may add: one a second over its 2 s watch, and one in flight. */
const LIVE_POLLS = 4;

const CONTRACT_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

// ---------------------------------------------------------------------------------------------
// The references of the sandbox, without the slow ones (they would take 10 s each).

const SLOW = new Set(['NT-SLOW001', 'usr_kyc_slow']);
const TX_REFS = [...PAYMENT_DEMO_REFERENCES, ...PAYMENT_FAILURE_REFERENCES]
  .map((doc) => doc.ref)
  .filter((ref) => /^NT-[A-Za-z0-9]+$/.test(ref) && !SLOW.has(ref))
  .concat('NT-UNKNOWN1');
const USER_REFS = [...KYC_DEMO_USERS, ...KYC_FAILURE_USERS]
  .map((doc) => doc.ref)
  .filter((ref) => /^usr_[a-z0-9_]+$/.test(ref) && !SLOW.has(ref))
  .concat('usr_unknown');

// ---------------------------------------------------------------------------------------------
// Values

const NAME = /^[_A-Za-z][_0-9A-Za-z]{0,10}$/;
const nameArb = fc.stringMatching(NAME);

/** Strings a careless or hostile client might send. */
const oddStringArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 31 }).map((code) => String.fromCharCode(code)),
      maxLength: 6,
    }),
  },
  {
    weight: 1,
    // Lone surrogates: valid in JSON escapes, not in UTF-8.
    arbitrary: fc.constantFrom('\uD800', '\uDFFF', 'usr_\uDC00', 'NT-A\uD83D'),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'NT-',
      'NT-SUCCESS001 ',
      ' NT-SUCCESS001',
      'nt-success001',
      'NT-SUCCESS001\n',
      'NT-SUCCESS001\u0000',
      'NT-../../etc/passwd',
      'NT-%2e%2e%2f',
      'NT-SUCCESS001?x=1',
      'NT-SUCCESS001#x',
      'NT-١٢٣',
      'NT-ＡＢＣ',
      `NT-${'A'.repeat(64)}`,
      `NT-${'A'.repeat(65)}`,
      'usr_demo_tier1\u0000',
      'usr_demo_tier1&slug=other',
      '../api/v1/user/kyc',
      '__proto__',
      'constructor',
      'tier_1',
      'tier_999',
      'tier_-1',
      "'; DROP TABLE users; --",
      '{{7*7}}',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, verbatim
      '${jndi:ldap://127.0.0.1/x}',
      '\u202e\u0644\u0627',
      '😀'.repeat(50),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('x', 'é', '😀', '\u0000', 'NT-', '\\', '"'),
        fc.integer({ min: 1_000, max: 150_000 }),
      )
      .map(([unit, length]) => unit.repeat(Math.ceil(length / unit.length))),
  },
);

/** Values of the wrong type for any argument. */
const wrongTypeArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, -1, 1.5, 2 ** 53, 1e308, -0, true, false, null, [], {}, [[]], { txRef: 'x' }),
  fc.jsonValue({ maxDepth: 3 }),
);

const txRefArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...TX_REFS) },
  { weight: 1, arbitrary: fc.stringMatching(/^NT-GEN[A-Za-z0-9]{1,12}$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^NT-(FLAKY|PENDING)[A-Za-z0-9]{1,8}$/) },
  { weight: 3, arbitrary: oddStringArb },
  { weight: 1, arbitrary: wrongTypeArb },
);

const userRefArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...USER_REFS) },
  { weight: 1, arbitrary: fc.stringMatching(/^usr_[a-z0-9_]{1,12}$/) },
  { weight: 3, arbitrary: oddStringArb },
  { weight: 1, arbitrary: wrongTypeArb },
);

/** Lists of up to 120 references (the limit is 100), or something that is not a list. */
const txRefsArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.array(txRefArb, { maxLength: 120 }) },
  {
    weight: 1,
    arbitrary: fc.array(fc.constantFrom(...TX_REFS), { minLength: 90, maxLength: 120 }),
  },
  { weight: 1, arbitrary: txRefArb },
  { weight: 1, arbitrary: fc.array(fc.array(txRefArb, { maxLength: 3 }), { maxLength: 3 }) },
);

/** Orders for `confirmPayment`: well-formed ones, odd fields, or something that is not one. */
const orderArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        id: fc.oneof(fc.constantFrom('order-1', '1001', 'o'.repeat(129)), oddStringArb),
        amount: fc.oneof(
          fc.constantFrom('15000.50', '19.99', '1', '0', '-5', '1e3', '1500.505', ' 1', '1,5'),
          fc.stringMatching(/^\d{1,25}(\.\d{1,5})?$/),
          oddStringArb,
        ),
        currency: fc.oneof(fc.constantFrom('NGN', 'usd', 'JPY', 'KWD', 'XYZ', 'ıNR'), oddStringArb),
        merchantRef: fc.oneof(fc.constantFrom('ORDER-1001', null, ''), oddStringArb),
      },
      { requiredKeys: ['id', 'amount', 'currency'] },
    ),
  },
  { weight: 1, arbitrary: wrongTypeArb },
);

const ARGUMENT_VALUES: Record<string, fc.Arbitrary<unknown>> = {
  txRef: txRefArb,
  order: orderArb,
  txRefs: txRefsArb,
  userRef: userRefArb,
  name: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('Ngozi Eze', 'Zoë Ǆ', 'x') },
    { weight: 3, arbitrary: oddStringArb },
    { weight: 1, arbitrary: wrongTypeArb },
  ),
  levelSlug: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('tier_1', 'tier_2', 'tier_3') },
    { weight: 1, arbitrary: fc.stringMatching(/^tier_\d{1,5}$/) },
    { weight: 2, arbitrary: oddStringArb },
    { weight: 1, arbitrary: wrongTypeArb },
  ),
};

/** A value written as a GraphQL literal (object keys that are not names are renamed). */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '0';
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'object') {
    const fields = Object.entries(value).map(
      ([key, inner], index) => `${NAME.test(key) ? key : `k${index}`}: ${literal(inner)}`,
    );
    return `{${fields.join(', ')}}`;
  }
  return 'null';
}

// ---------------------------------------------------------------------------------------------
// Operations generated from the schema

const schema = buildSubgraph({ typeDefs: loadTypeDefs(), resolvers, introspection: true });
const QUERY_FIELDS = ['transaction', 'transactions', 'kycUser', 'kycSdkConfig', 'gatewayInfo'];
const MUTATION_FIELDS = ['verifyTransaction', 'confirmPayment', 'refreshKycUser'];

const aliasArb = fc.oneof(
  fc.constantFrom('a', 'b', 'dup', 'status', 'transaction', '__typename', '__a'),
  nameArb,
);

/** Directives on a field: valid ones in a clean operation, any in a sloppy one. */
const directiveArb = (clean: boolean): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant('') },
    {
      weight: 1,
      arbitrary: clean
        ? fc.constantFrom('@include(if: true)', '@include(if: false)', '@skip(if: false)')
        : fc.constantFrom(
            '@skip(if: true)',
            '@skip(if: "yes")',
            '@include',
            '@deprecated',
            '@nope',
            '@skip(if: false) @skip(if: false)',
          ),
    },
  );

const selectionCache = new Map<string, fc.Arbitrary<string>>();

/**
 * A selection set of `type`. Clean: a random subset of its fields, each at most once, aliased
 * with names that cannot collide, so the selection always validates. Sloppy: random fields
 * with random aliases, plus unknown fields, missing or extra sub-selections, bad directives.
 */
function selectionArb(
  type: GraphQLObjectType,
  depth: number,
  clean: boolean,
): fc.Arbitrary<string> {
  const key = `${type.name}:${depth}:${clean}`;
  const cached = selectionCache.get(key);
  if (cached) return cached;
  const fieldArbs = Object.values(type.getFields()).map((field) => {
    const named = getNamedType(field.type);
    const deeper = isObjectType(named) && depth < 4 ? selectionArb(named, depth + 1, clean) : null;
    const sub: fc.Arbitrary<string> = isObjectType(named)
      ? clean || deeper === null
        ? (deeper ?? fc.constant('{ __typename }'))
        : fc.oneof(
            { weight: 12, arbitrary: deeper },
            { weight: 1, arbitrary: fc.constantFrom('', '{ }') },
          )
      : clean
        ? fc.constant('')
        : fc.oneof(
            { weight: 20, arbitrary: fc.constant('') },
            { weight: 1, arbitrary: fc.constant('{ a }') },
          );
    const alias = clean
      ? fc.option(
          nameArb.map((suffix) => `${field.name}__${suffix}`),
          { freq: 4 },
        )
      : fc.option(aliasArb, { freq: 4 });
    return fc
      .tuple(alias, sub, directiveArb(clean))
      .map(
        ([aliasName, selection, directive]) =>
          `${aliasName === null ? '' : `${aliasName}: `}${field.name}${directive ? ` ${directive}` : ''} ${selection}`,
      );
  });
  let arb: fc.Arbitrary<string>;
  if (clean) {
    arb = fc
      .tuple(fc.tuple(...fieldArbs.map((field) => fc.option(field, { freq: 2 }))), fc.nat(20))
      .map(([chosen, wrap]) => {
        const items = chosen.filter((item): item is string => item !== null);
        const body = items.length > 0 ? items.join(' ') : '__typename';
        // Now and then the same selection through an inline fragment on the type itself.
        return wrap === 0 ? `{ ... on ${type.name} { ${body} } }` : `{ ${body} }`;
      });
  } else {
    const item = fc.oneof(
      { weight: 16, arbitrary: fc.oneof(...fieldArbs) },
      { weight: 1, arbitrary: fc.constantFrom('__typename', 'nope', 'txRef(x: 1)', 'password') },
      {
        weight: 1,
        arbitrary: fc.oneof(...fieldArbs).map((inner) => `... on ${type.name} { ${inner} }`),
      },
    );
    arb = fc.array(item, { minLength: 1, maxLength: 8 }).map((items) => `{ ${items.join(' ')} }`);
  }
  selectionCache.set(key, arb);
  return arb;
}

interface ArgumentChoice {
  name: string;
  /** inline literal, variable with a value, variable declared but not given, or left out. */
  mode: 'inline' | 'variable' | 'unset' | 'omit';
  value: unknown;
  declaredType: string;
}

interface RootFieldChoice {
  alias: string | null;
  field: string;
  args: ArgumentChoice[];
  directive: string;
  selection: string;
}

function argumentArb(arg: GraphQLArgument, clean: boolean): fc.Arbitrary<ArgumentChoice> {
  const correctType = fc.constant(String(arg.type));
  return fc.record({
    name: fc.constant(arg.name),
    mode: clean
      ? fc.constantFrom('variable' as const, 'variable' as const, 'inline' as const)
      : fc.constantFrom('variable' as const, 'inline' as const, 'unset' as const, 'omit' as const),
    value: ARGUMENT_VALUES[arg.name] ?? wrongTypeArb,
    declaredType: clean
      ? correctType
      : fc.oneof(
          { weight: 3, arbitrary: correctType },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              'Int',
              'String',
              'ID',
              '[ID]',
              '[ID!]!',
              'Boolean!',
              'TransactionStatus',
              'JSON',
              '[[ID]]',
              'Nope',
              'Transaction',
              'DateTime!',
            ),
          },
        ),
  });
}

function rootFieldArb(
  field: GraphQLField<unknown, unknown>,
  clean: boolean,
): fc.Arbitrary<RootFieldChoice> {
  const named = getNamedType(field.type);
  if (!isObjectType(named)) throw new Error(`root field ${field.name} is not an object`);
  return fc.record({
    alias: fc.option(aliasArb, { freq: 3 }),
    field: fc.constant(field.name),
    args: fc.tuple(...field.args.map((arg) => argumentArb(arg, clean))),
    directive: directiveArb(clean),
    selection: selectionArb(named, 1, clean),
  });
}

interface Operation {
  kind: 'query' | 'mutation' | 'shorthand';
  /** Valid by construction (only the argument values vary), or with mistakes of all kinds. */
  clean: boolean;
  name: string | null;
  fields: RootFieldChoice[];
  /** Root fields moved into a named fragment on the root type. */
  viaFragment: boolean;
}

function rootFieldsArb(
  type: GraphQLObjectType | null | undefined,
  names: string[],
  clean: boolean,
): fc.Arbitrary<RootFieldChoice> {
  return fc.oneof(
    ...names.map((name) => {
      const field = type?.getFields()[name];
      if (!field) throw new Error(`the schema has no root field ${name}`);
      return rootFieldArb(field, clean);
    }),
  );
}

const operationArb: fc.Arbitrary<Operation> = fc
  .tuple(
    fc.oneof(
      { weight: 3, arbitrary: fc.constant('query' as const) },
      { weight: 1, arbitrary: fc.constant('mutation' as const) },
      { weight: 1, arbitrary: fc.constant('shorthand' as const) },
    ),
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(true) },
      { weight: 1, arbitrary: fc.constant(false) },
    ),
  )
  .chain(([kind, clean]) =>
    fc.record({
      kind: fc.constant(kind),
      clean: fc.constant(clean),
      name: fc.option(nameArb, { freq: 2 }),
      fields: fc.array(
        kind === 'mutation'
          ? rootFieldsArb(schema.getMutationType(), MUTATION_FIELDS, clean)
          : rootFieldsArb(schema.getQueryType(), QUERY_FIELDS, clean),
        { minLength: 1, maxLength: 5 },
      ),
      viaFragment: fc.boolean(),
    }),
  );

interface GraphQLParams {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
  extensions?: unknown;
  documentId?: unknown;
}

/** The document and variables of a generated operation. */
function assemble(operation: Operation): GraphQLParams {
  const definitions: string[] = [];
  const variables: Record<string, unknown> = {};
  // A shorthand query cannot declare variables: a clean one writes its arguments inline.
  const inlineOnly = operation.clean && operation.kind === 'shorthand';
  let next = 0;
  const fields = operation.fields.map((field, index) => {
    const args = field.args
      .filter((arg) => arg.mode !== 'omit')
      .map((arg) => {
        if (arg.mode === 'inline' || inlineOnly) return `${arg.name}: ${literal(arg.value)}`;
        const variable = `v${next++}`;
        definitions.push(`$${variable}: ${arg.declaredType}`);
        if (arg.mode === 'variable') variables[variable] = arg.value;
        return `${arg.name}: $${variable}`;
      });
    // In a clean operation, root fields get distinct names, so that they never conflict.
    const alias = operation.clean
      ? field.alias === null && operation.fields.length === 1
        ? ''
        : `${field.field}_${index}: `
      : field.alias === null
        ? ''
        : `${field.alias}: `;
    const argList = args.length > 0 ? `(${args.join(', ')})` : '';
    const directive = field.directive ? ` ${field.directive}` : '';
    return `${alias}${field.field}${argList}${directive} ${field.selection}`;
  });
  const rootType = operation.kind === 'mutation' ? 'Mutation' : 'Query';
  const body = operation.viaFragment ? '{ ...Root }' : `{ ${fields.join(' ')} }`;
  const fragment = operation.viaFragment
    ? ` fragment Root on ${rootType} { ${fields.join(' ')} }`
    : '';
  const head =
    operation.kind === 'shorthand'
      ? ''
      : `${operation.kind}${operation.name ? ` ${operation.name}` : ''}${
          definitions.length > 0 ? `(${definitions.join(', ')})` : ''
        } `;
  return {
    query: `${head}${body}${fragment}`,
    variables,
    ...(operation.name !== null &&
      operation.kind !== 'shorthand' && { operationName: operation.name }),
  };
}

// ---------------------------------------------------------------------------------------------
// Malformed and abusive documents

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

const malformedArb: fc.Arbitrary<GraphQLParams> = fc.oneof(
  // A valid operation cut anywhere.
  fc.tuple(operationArb.map(assemble), fc.nat()).map(([params, cut]) => {
    const text = String(params.query);
    return { ...params, query: text.slice(0, cut % (text.length + 1)) };
  }),
  // Random text and random bytes read as text.
  fc
    .oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }))
    .map((query) => ({ query })),
  // Deeply nested braces, list literals and inline fragments.
  fc.integer({ min: 1, max: 20_000 }).map((n) => ({ query: `${'{'.repeat(n)}${'}'.repeat(n)}` })),
  fc.integer({ min: 1, max: 3_000 }).map((n) => ({
    query: `{ transaction(txRef: ${'['.repeat(n)}"NT-SUCCESS001"${']'.repeat(n)}) { status } }`,
  })),
  fc.integer({ min: 1, max: 2_000 }).map((n) => ({
    query: `{ ${'... { '.repeat(n)}gatewayInfo { version } ${'} '.repeat(n)}}`,
  })),
  // (Deeper arrays overflow the stack of this test's own JSON.stringify, not the gateway's.)
  fc.integer({ min: 1, max: 1_000 }).map((n) => {
    let nested: unknown = 'NT-SUCCESS001';
    for (let i = 0; i < n; i++) nested = [nested];
    return {
      query: 'query ($refs: [ID!]!) { transactions(txRefs: $refs) { status } }',
      variables: { refs: nested },
    };
  }),
  // Many aliases, many root fields, many directives, many tokens.
  fc.integer({ min: 1, max: 300 }).map((n) => ({
    query: `{ ${range(n)
      .map((i) => `a${i}: gatewayInfo { version }`)
      .join(' ')} }`,
  })),
  fc.integer({ min: 1, max: 40 }).map((n) => ({
    query: `{ ${range(n)
      .map((i) => `t${i}: transaction(txRef: "NT-GEN${i}") { status amount }`)
      .join(' ')} }`,
  })),
  fc.integer({ min: 1, max: 150 }).map((n) => ({
    query: `{ ${'gatewayInfo { version } '.repeat(n)}}`,
  })),
  fc.integer({ min: 1, max: 120 }).map((n) => ({
    query: `{ gatewayInfo ${'@include(if: true) '.repeat(n)}{ version } }`,
  })),
  fc.integer({ min: 1, max: 7_000 }).map((n) => ({
    query: `{ gatewayInfo { ${'version '.repeat(n)}} }`,
  })),
  // A document over the size limit (padding in a comment).
  fc.integer({ min: 60_000, max: 200_000 }).map((n) => ({
    query: `{ gatewayInfo { version } }\n#${'x'.repeat(n)}`,
  })),
  // Fragment cycles, chains and chains that double at each step.
  fc.constantFrom(
    { query: '{ ...A } fragment A on Query { ...A }' },
    {
      query:
        '{ ...A } fragment A on Query { gatewayInfo { version } ...B } fragment B on Query { ...A }',
    },
    { query: '{ ...Missing }' },
    { query: 'fragment A on Query { gatewayInfo { version } }' },
  ),
  fc
    .tuple(fc.integer({ min: 1, max: 24 }), fc.boolean(), fc.constantFrom('Query', 'Transaction'))
    .map(([n, doubling, on]) => {
      const leaf = on === 'Query' ? 'gatewayInfo { version }' : 'status';
      const fragments = [`fragment F0 on ${on} { ${leaf} }`];
      for (let i = 1; i <= n; i++) {
        const spread = `...F${i - 1}`;
        fragments.push(`fragment F${i} on ${on} { ${doubling ? `${spread} ${spread}` : spread} }`);
      }
      const root = on === 'Query' ? `...F${n}` : `transaction(txRef: "NT-SUCCESS001") { ...F${n} }`;
      return { query: `{ ${root} } ${fragments.join(' ')}` };
    }),
  // Several operations, with or without a (matching) operationName.
  fc.option(fc.constantFrom('A', 'B', 'C', ''), { nil: undefined }).map((operationName) => ({
    query: 'query A { gatewayInfo { version } } query B { gatewayInfo { sandbox } }',
    ...(operationName !== undefined && { operationName }),
  })),
  // A subscription over plain HTTP, for references whose stream ends at once.
  fc
    .constantFrom('NT-SUCCESS001', 'NT-FAILED001', 'NT-UNKNOWN1', 'NT-ERROR500', 'bad')
    .map((txRef) => ({
      query: `subscription { transactionStatus(txRef: "${txRef}") { status } }`,
    })),
  // Introspection, and trusted-document ids.
  fc.constantFrom(
    { query: '{ __schema { queryType { name } types { name fields { name } } } }' },
    { query: '{ __type(name: "Transaction") { name fields { name type { name } } } }' },
    { query: '{ __typename }' },
  ),
  fc
    .tuple(
      fc.oneof(
        fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }),
        oddStringArb,
      ),
      fc.boolean(),
    )
    .map(([hash, withQuery]) => ({
      ...(withQuery && { query: '{ gatewayInfo { version } }' }),
      extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
    })),
  fc.oneof(oddStringArb, wrongTypeArb).map((documentId) => ({ documentId })),
);

/** The GraphQL parameters of a request, sometimes with wrong types in place of the right ones. */
const paramsArb: fc.Arbitrary<GraphQLParams> = fc
  .tuple(
    fc.oneof(
      { weight: 7, arbitrary: operationArb.map(assemble) },
      { weight: 3, arbitrary: malformedArb },
    ),
    fc.oneof(
      { weight: 30, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.record({ query: wrongTypeArb }) },
      { weight: 1, arbitrary: fc.record({ variables: fc.oneof(wrongTypeArb, oddStringArb) }) },
      { weight: 1, arbitrary: fc.record({ operationName: wrongTypeArb }) },
      { weight: 1, arbitrary: fc.record({ extensions: wrongTypeArb }) },
    ),
  )
  .map(([params, override]) => (override === null ? params : { ...params, ...override }));

// ---------------------------------------------------------------------------------------------
// HTTP requests

type Auth =
  | 'full'
  | 'transactions'
  | 'endUser'
  | 'endUserWithRefs'
  | 'none'
  | 'garbage'
  | 'expired';

/** Tokens that get 401 before anything else: the gateway may not call an upstream for them. */
const REFUSED_AUTH: ReadonlySet<Auth> = new Set(['none', 'garbage', 'expired']);
type BodyFormat = 'json' | 'truncatedJson' | 'urlencoded' | 'graphql' | 'multipart' | 'bytes';

interface FuzzRequest {
  method: string;
  params: GraphQLParams;
  /** POST only: also put the parameters in the URL. */
  paramsInUrl: boolean;
  bodyFormat: BodyFormat;
  contentType: string | null;
  accept: string | null;
  auth: Auth;
  requestId: string | null;
  cut: number;
  bytes: Uint8Array<ArrayBuffer>;
}

const requestArb: fc.Arbitrary<FuzzRequest> = fc.record({
  method: fc.oneof(
    { weight: 12, arbitrary: fc.constant('POST') },
    { weight: 5, arbitrary: fc.constant('GET') },
    { weight: 1, arbitrary: fc.constantFrom('PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD') },
  ),
  params: paramsArb,
  paramsInUrl: fc.oneof(
    { weight: 10, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
  bodyFormat: fc.oneof(
    { weight: 14, arbitrary: fc.constant('json' as const) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'truncatedJson' as const,
        'urlencoded' as const,
        'graphql' as const,
        'multipart' as const,
        'bytes' as const,
      ),
    },
  ),
  contentType: fc.oneof(
    { weight: 14, arbitrary: fc.constant('application/json') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'application/json; charset=utf-8',
        'application/graphql-response+json',
        'application/graphql+json',
      ),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        null,
        'text/plain',
        'text/plain;charset=UTF-8',
        'application/graphql',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=----fuzz',
        'multipart/form-data',
        'application/octet-stream',
        'application/json; charset=utf-16',
        'application/xml',
        '*/*',
        'application/json, text/plain',
      ),
    },
  ),
  accept: fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/graphql-response+json') },
    { weight: 4, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        null,
        '*/*',
        'application/graphql-response+json, application/json;q=0.9',
        'text/html',
        'text/event-stream',
        'multipart/mixed',
        'application/xml',
        'application/json; charset=latin1',
        '',
      ),
    },
  ),
  // Half with every scope (the most code runs), the rest spread over end users (with and
  // without a txRefs claim), a narrower scope, and callers without a valid token.
  auth: fc.oneof(
    { weight: 6, arbitrary: fc.constant('full' as const) },
    { weight: 2, arbitrary: fc.constantFrom('endUser' as const, 'endUserWithRefs' as const) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        'transactions' as const,
        'endUser' as const,
        'endUserWithRefs' as const,
        'none' as const,
        'garbage' as const,
        'expired' as const,
      ),
    },
  ),
  requestId: fc.option(fc.string({ unit: 'grapheme-ascii', maxLength: 200 }), { freq: 8 }),
  cut: fc.nat(),
  bytes: fc.uint8Array({ maxLength: 300 }),
});

/** URL search parameters for GET (non-string values JSON-encoded, as a client would). */
function searchOf(params: GraphQLParams): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    search.set(key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return search.toString();
}

/** `map` fields of multipart requests (graphql-multipart-request-spec), good and bad. */
const MULTIPART_MAPS = [
  '{}',
  '{"0":["variables.file"]}',
  '{"0":["__proto__.polluted"]}',
  '{"0":5}',
  '{"0":[5]}',
  '{"0":["query"]}',
  'null',
  '[1]',
  '{',
];

function bodyOf(request: FuzzRequest): Uint8Array<ArrayBuffer> {
  const json = JSON.stringify(request.params);
  const encoder = new TextEncoder();
  switch (request.bodyFormat) {
    case 'json':
      return encoder.encode(json);
    case 'truncatedJson':
      return encoder.encode(json.slice(0, request.cut % (json.length + 1)));
    case 'urlencoded':
      return encoder.encode(searchOf(request.params));
    case 'graphql':
      return encoder.encode(typeof request.params.query === 'string' ? request.params.query : json);
    case 'multipart':
      return encoder.encode(
        [
          '------fuzz',
          'Content-Disposition: form-data; name="operations"',
          '',
          json,
          '------fuzz',
          'Content-Disposition: form-data; name="map"',
          '',
          MULTIPART_MAPS[request.cut % MULTIPART_MAPS.length],
          '------fuzz--',
          '',
        ].join('\r\n'),
      );
    case 'bytes':
      return request.bytes;
  }
}

/** A one-line description of a request for failure messages (long values cut). */
function describeRequest(request: FuzzRequest): string {
  const cut = (text: string) =>
    text.length > 600 ? `${text.slice(0, 600)}… (${text.length})` : text;
  const { method, auth, contentType, accept, bodyFormat, paramsInUrl, params } = request;
  const summary = { method, auth, contentType, accept, bodyFormat, paramsInUrl };
  try {
    return cut(JSON.stringify({ ...summary, params }));
  } catch {
    return `${JSON.stringify(summary)} (params too deep to print)`;
  }
}

// ---------------------------------------------------------------------------------------------

let sandbox: Sandbox;
let gateway: TestGateway;
const tokens: Partial<Record<Auth, string>> = {};
/** Tokens without `sub` (a caller keyed by the token itself), for the connection transports. */
const connectionTokens: Partial<Record<'noSub' | 'endUserNoSub', string>> = {};
/** Status, error code and content type counts, printed at the end. */
const seen = new Map<string, number>();
const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);

/** What generated HTTP requests are sent to. */
interface Target {
  sandbox: Sandbox;
  gateway: TestGateway;
  tokens: Partial<Record<Auth, string>>;
  /** Text no answer may hold: another business's data and credentials. */
  foreign: readonly string[];
}
let target: Target;

const ENV = {
  UPSTREAM_TIMEOUT_MS: '800',
  UPSTREAM_RETRY_BASE_DELAY_MS: '20',
  UPSTREAM_BREAKER_HALF_OPEN_MS: '250',
  RATE_LIMIT_RPS: '0',
  SERVICE_RATE_LIMIT_RPS: '0',
  LIVE_MAX_WATCH_SECONDS: '2',
  LIVE_POLL_MS: '1000',
  UPSTREAM_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
  MAX_RECORDS_PER_REQUEST: String(MAX_RECORDS),
};
/** The SDK address: a public setting handed out as it is, apart from the sandbox's addresses. */
const SDK_SCRIPT_URL = 'https://sdk.kyc.example/v1/kyc.js';

/**
 * The tokens of every kind, signed by `gateway`'s test secret, with `claims` (a business) added
 * to each valid one.
 */
async function tokensOf(
  gateway: TestGateway,
  claims: { biz?: string } = {},
): Promise<Partial<Record<Auth, string>>> {
  return {
    full: await gateway.token(claims),
    transactions: await gateway.token({ ...claims, scope: 'transactions:read' }),
    endUser: await gateway.token({ ...claims, sub: 'usr_demo_tier1', scope: null }),
    endUserWithRefs: await gateway.token({
      ...claims,
      sub: 'usr_demo_tier1',
      scope: null,
      txRefs: ['NT-SUCCESS001', 'NT-PENDING001', 'NT-FAILED001', 'NT-ERR500'],
    }),
    garbage: 'not-a-jwt',
    expired: await gateway.token({ ...claims, expiresIn: Math.floor(Date.now() / 1000) - 60 }),
  };
}

beforeAll(async () => {
  sandbox = await startSandbox();
  // The SDK address is set apart from the sandbox's addresses so that any upstream address in a
  // response is a leak.
  gateway = await startGateway({ ...sandboxUpstreams(sandbox), sdkScriptUrl: SDK_SCRIPT_URL }, ENV);
  Object.assign(tokens, await tokensOf(gateway));
  connectionTokens.noSub = await gateway.token({ sub: null, scope: 'transactions:read' });
  connectionTokens.endUserNoSub = await gateway.token({
    sub: null,
    scope: null,
    txRefs: ['NT-SUCCESS001', 'NT-PENDING001'],
  });
  target = { sandbox, gateway, tokens, foreign: [] };
});
afterAll(async () => {
  await gateway?.close();
  await sandbox?.close();
});

/** Host:port of every upstream address (the SDK address is not one of the sandbox's). */
function upstreamAddresses(of: Sandbox = sandbox): string[] {
  return [of.paymentUrl, of.kycUrl].flatMap((address) => {
    const url = new URL(address);
    return [url.host, `localhost:${url.port}`, address];
  });
}

/** Checks one GraphQL result (a response body or an SSE event); returns the problems. */
function resultProblems(result: unknown): string[] {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    return ['the JSON body is not an object'];
  }
  const { data, errors } = result as { data?: unknown; errors?: unknown };
  const problems: string[] = [];
  if (!('data' in result) && !('errors' in result)) problems.push('neither data nor errors');
  if (data !== undefined && data !== null && typeof data !== 'object') problems.push('bad data');
  if (data !== undefined && data !== null) count('with data');
  if (errors === undefined) return problems;
  if (!Array.isArray(errors) || errors.length === 0) return [...problems, 'errors is not a list'];
  for (const error of errors as Array<{ message?: unknown; extensions?: { code?: unknown } }>) {
    const code = error?.extensions?.code;
    count(`code ${String(code)}`);
    if (typeof error?.message !== 'string') problems.push('an error without a message');
    if (typeof code !== 'string' || !CONTRACT_CODES.has(code)) {
      problems.push(`error code ${JSON.stringify(code)} is not in the contract`);
    }
    if (code === 'INTERNAL_SERVER_ERROR' && error.message !== 'Unexpected error.') {
      problems.push(`INTERNAL_SERVER_ERROR with an unmasked message: ${error.message}`);
    }
  }
  return problems;
}

async function send(request: FuzzRequest): Promise<string[]> {
  const headers: Record<string, string> = {};
  const { sandbox, gateway, tokens } = target;
  const token = tokens[request.auth];
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (request.accept !== null) headers.accept = request.accept;
  if (request.requestId !== null) headers['x-request-id'] = request.requestId;
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  if (hasBody && request.contentType !== null) headers['content-type'] = request.contentType;
  const inUrl = !hasBody || request.paramsInUrl;
  const url = `${gateway.url}/graphql${inUrl ? `?${searchOf(request.params)}` : ''}`;

  const started = performance.now();
  const callsBefore = sandbox.requests.length;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: request.method,
      headers,
      // A Uint8Array body: fetch adds no content-type of its own.
      ...(hasBody && { body: bodyOf(request) }),
      redirect: 'manual',
      signal: AbortSignal.timeout(MAX_RESPONSE_MS * 2),
    });
    text = await response.text();
  } catch (error) {
    // Node's HTTP parser refuses a request line or headers over 16 KB by closing the socket.
    if (url.length > 16_000) {
      count('closed: URL over 16 KB');
      return [];
    }
    return [`no answer: ${String(error)}`];
  }
  const elapsed = performance.now() - started;
  const type = response.headers.get('content-type') ?? '';
  count(`status ${response.status}`);
  count(`type ${type.split(';', 1)[0] || '(none)'}`);

  const problems: string[] = [];
  if (response.status >= 500) problems.push(`status ${response.status}`);
  if (elapsed > MAX_RESPONSE_MS) problems.push(`answered after ${Math.round(elapsed)} ms`);

  // Upstream calls this request caused: none without a valid token; otherwise at most the
  // records a request may read, each with its retries (and a subscription's polls).
  const calls = sandbox.requests.length - callsBefore;
  const live = /subscription/i.test(JSON.stringify(request.params)) ? LIVE_POLLS : 0;
  const allowed = REFUSED_AUTH.has(request.auth) ? 0 : MAX_RECORDS * MAX_ATTEMPTS + live;
  count(`upstream calls ${calls === 0 ? '0' : calls <= 10 ? '1-10' : '>10'}`);
  if (calls > allowed) problems.push(`${calls} upstream calls (at most ${allowed} allowed)`);

  // Leaks, in the body and the headers.
  const everything = `${[...response.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${text}`;
  const secrets = {
    'the payment access token': sandbox.credentials.paymentAccessToken,
    'the KYC secret key': sandbox.credentials.kycSecretKey,
    'the JWT secret': TEST_JWT_SECRET,
  };
  for (const [what, secret] of Object.entries(secrets)) {
    if (everything.includes(secret)) problems.push(`the response contains ${what}`);
  }
  for (const text of target.foreign) {
    if (everything.includes(text))
      problems.push(`the response contains another business's ${text}`);
  }
  // (GraphiQL's page is a static bundle whose code contains such text itself.)
  if (!type.startsWith('text/html') && /\n\s+at |\\n\s+at /.test(everything)) {
    problems.push('the response contains a stack trace');
  }
  for (const address of upstreamAddresses(sandbox)) {
    if (everything.includes(address)) problems.push(`the response contains ${address}`);
  }

  if (request.method !== 'HEAD' && /application\/(graphql-response\+)?json/.test(type)) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push(`a ${type} body that is not JSON: ${text.slice(0, 200)}`);
    }
    if (body !== undefined) problems.push(...resultProblems(body));
  } else if (type.startsWith('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:') || line.trim() === 'data:') continue;
      try {
        problems.push(...resultProblems(JSON.parse(line.slice(5))));
      } catch {
        problems.push(`an SSE event that is not JSON: ${line.slice(0, 200)}`);
      }
    }
  }
  if (problems.length > 0) {
    problems.push(`HTTP ${response.status} ${type}: ${text.slice(0, 500)}`);
  }
  return problems;
}

/** Sends `runs` generated HTTP requests to `target`, each checked by `send`. */
async function fuzzHttp(runs: number): Promise<void> {
  console.log(
    `fuzz: seed=${SEED} runs=${runs} (override with FUZZ_SEED / FUZZ_RUNS; FUZZ_SHRINK=1 to shrink)`,
  );
  const started = performance.now();
  const property = fc.asyncProperty(
    requestArb.map((request) =>
      Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) }),
    ),
    async (request) => {
      const problems = await send(request);
      if (problems.length > 0) {
        if (DUMP) writeFileSync(DUMP, JSON.stringify(request));
        throw new Error(`${problems.join('\n')}\nrequest: ${describeRequest(request)}`);
      }
    },
  );
  await fc.assert(property, { seed: SEED, numRuns: runs, endOnFailure: !SHRINK });
  console.log(
    `fuzz: ${runs} requests in ${Math.round(performance.now() - started)} ms; ${[...seen]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${key}: ${n}`)
      .join(', ')}`,
  );
}

describe('fuzzing /graphql', () => {
  it(
    'answers every generated request without a 5xx, a leak or a non-contract error code',
    () => fuzzHttp(RUNS),
    600_000,
  );

  it('drives WebSocket and graphql-sse single connection with tokens of every kind', async () => {
    const AUTHS = [
      'full',
      'transactions',
      'endUser',
      'endUserWithRefs',
      'none',
      'garbage',
      'expired',
      'noSub',
      'endUserNoSub',
    ] as const;
    const secrets = [
      sandbox.credentials.paymentAccessToken,
      sandbox.credentials.kycSecretKey,
      TEST_JWT_SECRET,
      ...upstreamAddresses(),
    ];
    const connectionRuns = Math.max(20, Math.round(RUNS / 5));
    const property = fc.asyncProperty(
      paramsArb,
      fc.constantFrom('WebSocket' as const, 'SSE single' as const),
      fc.constantFrom(...AUTHS),
      async (params, transport, auth) => {
        const token =
          auth === 'noSub' || auth === 'endUserNoSub'
            ? (connectionTokens[auth] ?? null)
            : auth === 'none'
              ? null
              : (tokens[auth] ?? null);
        const started = performance.now();
        const out = await runOver(transport, gateway.url, params as WireOperation, {
          token,
          timeoutMs: MAX_RESPONSE_MS,
        });
        const problems: string[] = [];
        if (performance.now() - started > MAX_RESPONSE_MS) problems.push('no end in time');
        if (out.status !== undefined && out.status >= 500) problems.push(`HTTP ${out.status}`);
        // graphql-ws closes 4400 on a subscribe message its protocol does not allow.
        const object = (v: unknown) => v == null || (typeof v === 'object' && !Array.isArray(v));
        const { query, variables, operationName, extensions } = params as Record<string, unknown>;
        const wellFormed =
          typeof query === 'string' &&
          object(variables) &&
          object(extensions) &&
          (operationName == null || typeof operationName === 'string');
        const allowedClose = new Set([4403, ...(wellFormed ? [] : [4400])]);
        if (out.close !== undefined && !allowedClose.has(out.close)) {
          problems.push(`closed ${out.close}`);
        }
        if (REFUSED_AUTH.has(auth as Auth)) {
          const refused = transport === 'WebSocket' ? out.close === 4403 : out.status === 401;
          if (!refused) problems.push(`a ${auth} token was not refused`);
        }
        for (const result of out.results) problems.push(...resultProblems(result));
        for (const secret of secrets) if (out.raw.includes(secret)) problems.push('a leak');
        if (/\n\s+at |\\n\s+at |\.ts:\d/.test(out.raw)) problems.push('a stack trace');
        count(`${transport} ${out.close ?? out.status ?? 'open'}`);
        if (problems.length > 0) {
          throw new Error(
            `${problems.join('\n')}\n${transport} ${auth} ${JSON.stringify(params).slice(0, 400)}\n${out.raw.slice(0, 400)}`,
          );
        }
      },
    );
    await fc.assert(property, { seed: SEED, numRuns: connectionRuns, endOnFailure: !SHRINK });
    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).toBe(200);
  }, 600_000);

  it('calls the payment upstream only with well-formed references, and KYC with its slug', () => {
    for (const request of sandbox.requests) {
      if (request.service === 'payment') {
        expect(request.path).toMatch(/^\/pg\/api\/v1\/transaction\/status\/NT-[A-Za-z0-9]{1,64}$/);
      } else {
        expect(request.path).toBe('/api/v1/user/kyc');
        expect(request.query.slug).toBe(sandbox.credentials.kycBusinessSlug);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
        expect(request.query.userRef).toMatch(/^[^\u0000-\u001f\u007f]{1,128}$/u);
      }
    }
  });

  it('still serves afterwards: /healthz, then correct data from cache and fresh', async () => {
    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).toBe(200);
    // Let an upstream circuit that the failure references opened reach half-open.
    advanceWallClock(400);
    const post = async (query: string) => {
      const response = await fetch(`${gateway.url}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
          authorization: `Bearer ${tokens.full}`,
        },
        body: JSON.stringify({ query }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const mutation = await post(
      'mutation { verifyTransaction(txRef: "NT-SUCCESS001") { txRef status amount currency card { masked } } refreshKycUser(userRef: "usr_demo_tier1") { userRef level currentLevel { slug } } }',
    );
    expect(mutation).toEqual({
      status: 200,
      body: {
        data: {
          verifyTransaction: {
            txRef: 'NT-SUCCESS001',
            status: 'SUCCESSFUL',
            amount: 15000.5,
            currency: 'NGN',
            card: { masked: '411111******1111' },
          },
          refreshKycUser: { userRef: 'usr_demo_tier1', level: 1, currentLevel: { slug: 'tier_1' } },
        },
      },
    });
    const query = await post(
      '{ transactions(txRefs: ["NT-FAILED001", "NT-UNKNOWN1"]) { status amount } kycSdkConfig(userRef: "usr_demo_new", name: "Ngozi Eze", levelSlug: "tier_1") { userRef levelSlug scriptUrl } gatewayInfo { version } }',
    );
    expect(query).toEqual({
      status: 200,
      body: {
        data: {
          transactions: [{ status: 'FAILED', amount: 1234.56 }, null],
          kycSdkConfig: {
            userRef: 'usr_demo_new',
            levelSlug: 'tier_1',
            scriptUrl: 'https://sdk.kyc.example/v1/kyc.js',
          },
          gatewayInfo: { version: expect.any(String) },
        },
      },
    });
  });
});

describe('fuzzing /graphql under business A, with business B beside it', () => {
  let two: BusinessesSetup;
  /** Where B's upstream calls end and A's fuzzing begins. */
  let warmed = 0;

  beforeAll(async () => {
    two = await startBusinessesGateway([A, B], { ...ENV, KYC_SDK_SCRIPT_URL: SDK_SCRIPT_URL });
    // Every record read under B first, then under A: whatever A's requests could be served from
    // B's is there, and the values both businesses share are known.
    const read = async (biz: string) => {
      const token = await two.token(biz);
      const reads = [
        ...TX_REFS.map((txRef) => ({
          query:
            'query($txRef: ID!) { transaction(txRef: $txRef) { customer { fullName email phone } } }',
          variables: { txRef },
        })),
        ...USER_REFS.map((userRef) => ({
          query: 'query($userRef: ID!) { kycUser(userRef: $userRef) { name } }',
          variables: { userRef },
        })),
      ];
      const answers: string[] = [];
      for (const { query, variables } of reads) {
        const answer = await gql(two.gateway, query, variables, token);
        answers.push(JSON.stringify(answer.data ?? null));
      }
      return new Set(
        answers.flatMap((answer) =>
          [...answer.matchAll(/"(?:fullName|email|phone|name)":"([^"]+)"/g)].map((m) => m[1] ?? ''),
        ),
      );
    };
    const ofB = await read(B);
    const ofA = await read(A);
    const credentialsOfB = two.sandbox.businesses?.[1]?.credentials;
    if (!credentialsOfB) throw new Error('no business B');
    const foreign = [
      B_MARKER,
      ...[...ofB].filter((value) => value !== '' && !ofA.has(value)),
      credentialsOfB.paymentAccessToken,
      credentialsOfB.kycSecretKey,
      credentialsOfB.kycPublicKey,
      credentialsOfB.kycBusinessSlug,
    ];
    // B's customers and users have names of their own: the list holds them.
    expect(foreign.length).toBeGreaterThan(10);
    warmed = two.sandbox.requests.length;
    target = {
      sandbox: two.sandbox,
      gateway: two.gateway,
      tokens: await tokensOf(two.gateway, { biz: A }),
      foreign,
    };
  }, 120_000);
  afterAll(async () => {
    await two?.close();
  });

  it("never answers A's requests with B's data or credentials, nor calls upstream as B", async () => {
    await fuzzHttp(Math.max(50, Math.round(RUNS / 4)));
    const calls = two.sandbox.requests.slice(warmed).map((call) => ownerOf(two.sandbox, call));
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls)).toEqual(new Set([A]));
  }, 600_000);
});
