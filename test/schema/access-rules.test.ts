/**
 * The access rules live in the SDL (schema/access.graphql): the schema cannot be built with a
 * root field, or a field of a `@personalData` type, that has no rule (so the gateway does not
 * start and `npm run schema:check` fails); the rule a field declares is the rule it gets, before
 * its resolver runs; `npm run schema:compat` calls a loosened rule breaking; and docs/api.md's
 * table is the one the SDL prints. The behaviour of each rule on every transport is tested by the
 * security and integration tests (end-user-payments, auth, federation, transport-matrix).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execute, parse } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { withAccessTable } from '../../scripts/schema-print.ts';
import { NO_ACCESS, type Viewer } from '../../src/auth.ts';
import { buildSubgraph } from '../../src/graphql/federation.ts';
import type { Resolvers } from '../../src/graphql/generated/resolvers-types.ts';
import { resolvers } from '../../src/graphql/resolvers/index.ts';
import { loadTypeDefs } from '../../src/pipeline.ts';
import { codesOf, gql, startSandboxGateway } from '../helpers/gateway.ts';

const ROOT = process.cwd();
const dir = mkdtempSync(join(tmpdir(), 'access-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The gateway's schema with `extra` SDL planted, and `planted` resolvers for its fields. */
function build(extra: string, planted: Record<string, unknown> = {}) {
  return buildSubgraph({
    typeDefs: [...loadTypeDefs(), extra],
    resolvers: { ...resolvers, Query: { ...resolvers.Query, ...planted } } as Resolvers,
    introspection: true,
  });
}

function viewer(scopes: string[], extra: Partial<Viewer> = {}): Viewer {
  return { subject: 'usr_1', scopes: new Set(scopes), txRefs: new Set(), ...extra };
}

describe('a schema that cannot forget a rule', () => {
  it('refuses a planted root field with no rule, naming it', () => {
    expect(() => build('extend type Query { planted(userRef: ID!): String }')).toThrow(
      /no access rule.*Query\.planted/,
    );
    expect(() => build('extend type Mutation { plantedToo: String }')).toThrow(
      /Mutation\.plantedToo/,
    );
  });

  it('refuses a field of a @personalData type with no rule of its own or of its type', () => {
    expect(() =>
      build(`
        type Secret @personalData { phone: String  ok: String @authenticated }
        extend type Query { secret: Secret @authenticated }
      `),
    ).toThrow(/Secret\.phone(?!.*Secret\.ok)/);
    expect(() =>
      build(`
        type Secret @personalData @authenticated { phone: String }
        extend type Query { secret: Secret @authenticated }
      `),
    ).not.toThrow();
  });

  it('refuses a rule naming a scope no token means anything by, or a row rule naming no argument', () => {
    expect(() =>
      build('extend type Query { planted: String @requiresScopes(scopes: [["admin"]]) }'),
    ).toThrow(/unknown scopes.*admin/);
    expect(() =>
      build(
        'extend type Query { planted(id: ID!): String @rowRule(rule: OWN_PAYMENTS, by: "txRef", anyWith: "transactions:read") }',
      ),
    ).toThrow(/names no argument "txRef"/);
  });

  it('schema.graphql prints the rules where they apply', () => {
    const printed = readFileSync(join(ROOT, 'schema.graphql'), 'utf8');
    expect(printed).toContain(
      '): Transaction @authenticated @requiresScopes(scopes: [["transactions:read"]])',
    );
    expect(printed).toContain(
      '): KycUser @authenticated @rowRule(rule: OWN_KYC_RECORD, by: "userRef", anyWith: "kyc:read")',
    );
  });
});

describe('the rule a field declares is the rule it gets, before its resolver runs', () => {
  it('checks a planted field by its SDL: scopes, then rows, then no token', async () => {
    const called: string[] = [];
    const schema = build(
      `extend type Query {
        scoped: String @authenticated @requiresScopes(scopes: [["kyc:read"], ["transactions:read"]])
        own(userRef: ID!): String @authenticated @rowRule(rule: OWN_KYC_RECORD, by: "userRef", anyWith: "kyc:read")
      }`,
      {
        scoped: () => {
          called.push('scoped');
          return 'yes';
        },
        own: (_: unknown, args: { userRef: string }) => {
          called.push(args.userRef);
          return 'yes';
        },
      },
    );
    const run = async (query: string, who: Viewer) =>
      execute({ schema, document: parse(query), contextValue: { viewer: who } });

    const refusedScope = await run('{ scoped }', viewer([]));
    expect(refusedScope.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect(refusedScope.errors?.[0]?.message).toBe(
      'This field needs the scope kyc:read, or transactions:read.',
    );
    expect((await run('{ scoped }', viewer(['transactions:read']))).data).toEqual({
      scoped: 'yes',
    });

    const foreign = await run('{ own(userRef: "usr_2") }', viewer([]));
    expect(foreign.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect(foreign.errors?.[0]?.path).toEqual(['own']);
    expect((await run('{ own(userRef: "usr_1") }', viewer([]))).data).toEqual({ own: 'yes' });
    expect((await run('{ own(userRef: "usr_2") }', viewer(['kyc:read']))).data).toEqual({
      own: 'yes',
    });

    const anonymous = await run('{ scoped }', NO_ACCESS);
    expect(anonymous.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    expect(called).toEqual(['scoped', 'usr_1', 'usr_2']);
  });
});

describe('a list argument checked entry by entry, whoever asked the same document before', () => {
  it('answers each token by its own rights when one compiled document serves them in turn', async () => {
    const setup = await startSandboxGateway();
    try {
      const endUser = await setup.gateway.token({
        sub: 'usr_demo_tier1',
        scope: null,
        txRefs: ['NT-SUCCESS001'],
      });
      // One literal document (compiled once, its arguments possibly shared between runs).
      const query = '{ transactions(txRefs: ["NT-SUCCESS001", "NT-FAILED001"]) { txRef } }';
      for (const round of [1, 2]) {
        const service = await gql(setup.gateway, query, {}, setup.token);
        expect(service.errors, `round ${round}`).toBeUndefined();
        expect(service.data).toEqual({
          transactions: [{ txRef: 'NT-SUCCESS001' }, { txRef: 'NT-FAILED001' }],
        });
        const own = await gql(setup.gateway, query, {}, endUser);
        expect(codesOf(own)).toEqual(['FORBIDDEN']);
        expect(own.errors?.[0]?.path).toEqual(['transactions', 1]);
        expect(own.data).toEqual({ transactions: [{ txRef: 'NT-SUCCESS001' }, null] });
      }
    } finally {
      await setup.close();
    }
  });
});

describe('the rule before the form of the arguments', () => {
  it("refuses another user's KYC whatever the userRef, and checks the form for one's own", async () => {
    const setup = await startSandboxGateway();
    try {
      const endUser = await setup.gateway.token({ sub: 'usr_demo_tier1', scope: null });
      const ask = (userRef: string) =>
        gql(
          setup.gateway,
          'query ($u: ID!) { kycUser(userRef: $u) { userRef } }',
          { u: userRef },
          endUser,
        );
      expect(codesOf(await ask('x'.repeat(200)))).toEqual(['FORBIDDEN']);
      expect(codesOf(await ask('usr_demo_tier3'))).toEqual(['FORBIDDEN']);
      expect(codesOf(await ask('usr_demo_tier1'))).toEqual([]);
      const withScope = await gql(
        setup.gateway,
        'query ($u: ID!) { kycUser(userRef: $u) { userRef } }',
        { u: 'x'.repeat(200) },
        setup.token,
      );
      expect(codesOf(withScope)).toEqual(['BAD_USER_INPUT']);
    } finally {
      await setup.close();
    }
  });
});

describe('npm run schema:compat on a loosened rule', () => {
  const current = readFileSync(join(ROOT, 'schema.graphql'), 'utf8');
  const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');

  function compat(edited: string, changelogText = changelog) {
    const id = Math.random().toString(36).slice(2);
    const released = join(dir, `${id}.released.graphql`);
    const now = join(dir, `${id}.graphql`);
    const log = join(dir, `${id}.md`);
    writeFileSync(released, current);
    writeFileSync(now, edited);
    writeFileSync(log, changelogText);
    const run = spawnSync(
      process.execPath,
      ['scripts/schema-compat.ts', '--released', released, '--current', now, '--changelog', log],
      { cwd: ROOT, encoding: 'utf8', timeout: 15_000 },
    );
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  }

  it('passes when nothing changed', () => {
    expect(compat(current).status).toBe(0);
  });

  it('fails on a scope removed, a row rule removed, or a type rule removed, naming each', () => {
    const scopeRemoved = current.replace(
      /(verifyTransaction\([^)]*\): Transaction @authenticated) @requiresScopes\(scopes: \[\["transactions:read"\]\]\)/,
      '$1',
    );
    expect(scopeRemoved).not.toBe(current);
    const scope = compat(scopeRemoved);
    expect(scope.status).toBe(1);
    expect(scope.output).toContain('`Mutation.verifyTransaction`');

    const rowRemoved = current.replace(
      /(\): Transaction @authenticated) @rowRule\(rule: OWN_PAYMENTS, by: "txRef", anyWith: "transactions:read"\)/,
      '$1',
    );
    expect(rowRemoved).not.toBe(current);
    const row = compat(rowRemoved);
    expect(row.status).toBe(1);
    expect(row.output).toMatch(/`(Query\.transaction|Subscription\.transactionStatus)`/);

    const typeOpened = current.replace(
      'type Customer @personalData @authenticated {',
      'type Customer {',
    );
    expect(typeOpened).not.toBe(current);
    expect(compat(typeOpened).output).toContain('`Customer`');
  });

  it('passes a loosened rule that CHANGELOG.md names, and a tightened one', () => {
    const scopeRemoved = current.replace(
      /(verifyTransaction\([^)]*\): Transaction @authenticated) @requiresScopes\(scopes: \[\["transactions:read"\]\]\)/,
      '$1',
    );
    const named = changelog.replace(
      /^## Unreleased\n/m,
      '## Unreleased\n\n- `Mutation.verifyTransaction` no longer needs a scope.\n',
    );
    expect(compat(scopeRemoved, named).status).toBe(0);
    const tightened = current.replace(
      'gatewayInfo: GatewayInfo! @authenticated',
      'gatewayInfo: GatewayInfo! @authenticated @requiresScopes(scopes: [["kyc:read"]])',
    );
    expect(tightened).not.toBe(current);
    expect(compat(tightened).status).toBe(0);
  });
});

describe("docs/api.md's table of rules", () => {
  it('is the one the SDL prints (npm run schema:print writes it)', () => {
    const doc = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    expect(withAccessTable(doc)).toBe(doc);
    expect(doc).toMatch(/\| `Mutation\.verifyTransaction` +\| yes +\| `transactions:read` +\| +\|/);
  });
});
