/**
 * docs/clients.md's recipes, run as they are written there, against a real gateway in front of
 * the sandbox: each TypeScript block marked `test=<id>` becomes a module (its imports kept, the
 * rest the body of a function given `url`, `token` and a `console` that records what the block
 * prints) and runs with the real client library; the `sh` block runs in bash with curl. The
 * Kotlin and Swift blocks cannot run here: the test holds an exact copy of each (a changed block
 * fails it) and sends the requests those settings make. A global fetch wrapper records what
 * the HTTP clients send, to show that persisted queries really go by hash.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxGateway, type TestGateway } from '../helpers/gateway.ts';

const execFileAsync = promisify(execFile);
const ROOT = process.cwd();
const DOC = readFileSync(join(ROOT, 'docs/clients.md'), 'utf8');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const WORK = join(ROOT, 'test-results', `doc-recipes-${process.pid}`);

let gateway: TestGateway;
let token: string;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ gateway, token, close } = await startSandboxGateway(
    { LIVE_POLL_MS: '200' },
    { pendingSeconds: 1 },
  ));
  mkdirSync(WORK, { recursive: true });
});
afterAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  await close();
});

/** The code of the block marked `test=<id>` in a Markdown text. */
function block(id: string, text = DOC): { language: string; code: string } {
  const found = [...text.matchAll(/^```(\w+) test=(\S+)\n([\s\S]*?)^```$/gm)].find(
    ([, , name]) => name === id,
  );
  if (!found) throw new Error(`no block marked test=${id}`);
  return { language: found[1] ?? '', code: found[3] ?? '' };
}

interface Sent {
  method: string;
  url: string;
  body: string;
}

/**
 * Runs a TypeScript block: its import statements stay at the top of a module, the rest becomes
 * the body of `run(url, token, console)`. Returns what it printed and what it sent over fetch.
 */
function moduleOf(code: string): string {
  const imports = code.match(/^import [\s\S]*?from '[^']+';$/gm) ?? [];
  let body = code;
  for (const statement of imports) body = body.replace(statement, '');
  return (
    `${imports.join('\n')}\n` +
    'export default async function run(url: string, token: string, ' +
    'console: { log: (...values: unknown[]) => void }): Promise<void> {\n' +
    `${body}\n}\n`
  );
}

async function runBlock(id: string): Promise<{ printed: unknown[][]; sent: Sent[] }> {
  const { language, code } = block(id);
  expect(language).toBe('ts');
  const file = join(WORK, `${id}.ts`);
  writeFileSync(file, moduleOf(code));
  const printed: unknown[][] = [];
  const sent: Sent[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    sent.push({
      method: request.method,
      url: request.url,
      body: request.method === 'GET' ? '' : await request.clone().text(),
    });
    return realFetch(request);
  };
  try {
    const module = (await import(pathToFileURL(file).href)) as {
      default: (
        url: string,
        token: string,
        console: { log: (...v: unknown[]) => void },
      ) => Promise<void>;
    };
    await module.default(`${gateway.url}/graphql`, token, {
      log: (...values) => printed.push(values),
    });
  } finally {
    globalThis.fetch = realFetch;
  }
  return { printed, sent };
}

it('every TypeScript block type-checks (tsc --strict), as a reader copies it', async () => {
  const dir = join(WORK, 'typecheck');
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (const [, language, id, code] of DOC.matchAll(/^```(\w+) test=(\S+)\n([\s\S]*?)^```$/gm)) {
    if (language !== 'ts' || !id || code === undefined) continue;
    files.push(join(dir, `${id}.ts`));
    writeFileSync(join(dir, `${id}.ts`), moduleOf(code));
  }
  expect(files.length).toBeGreaterThanOrEqual(6);
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const options = ['--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022'];
  const resolution = ['--module', 'esnext', '--moduleResolution', 'bundler', '--lib', 'es2022,dom'];
  const result = await execFileAsync(process.execPath, [tsc, ...options, ...resolution, ...files], {
    encoding: 'utf8',
    timeout: 60_000,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }));
  expect(result.stdout).toBe('');
}, 60_000);

describe('Apollo Client', () => {
  it("keeps partial results with errorPolicy 'all' (test=apollo-errors)", async () => {
    const { printed } = await runBlock('apollo-errors');
    expect(printed).toEqual([
      [['SUCCESSFUL', null, null]],
      [['transactions', 1], 'UPSTREAM_UNAVAILABLE'],
    ]);
  });

  it('sends persisted queries by hash, by GET (test=apollo-persisted)', async () => {
    const { printed, sent } = await runBlock('apollo-persisted');
    expect(printed).toEqual([['FAILED']]);
    const first = sent[0];
    expect(first?.method).toBe('GET');
    expect(first?.url).toContain('persistedQuery');
    expect(first?.url).not.toMatch(/[?&]query=/);
    // Unknown at first: the document follows, then the gateway knows the hash.
    expect(sent.some((request) => request.body.includes('"query"'))).toBe(true);
  });

  it('follows a subscription over multipart HTTP to its end (test=apollo-subscription)', async () => {
    const { printed, sent } = await runBlock('apollo-subscription');
    expect(printed).toEqual([['PENDING'], ['SUCCESSFUL']]);
    expect(sent).toHaveLength(1);
  });
});

it('urql with persisted queries (test=urql)', async () => {
  const { printed, sent } = await runBlock('urql');
  expect(printed).toEqual([['tier_1', 0]]);
  expect(sent[0]?.method).toBe('GET');
  expect(sent[0]?.url).toContain('persistedQuery');
});

it('graphql-ws over WebSocket (test=graphql-ws)', async () => {
  const { printed } = await runBlock('graphql-ws');
  expect(printed).toEqual([[{ status: 'PENDING' }], [{ status: 'SUCCESSFUL' }]]);
});

it('graphql-sse over Server-Sent Events (test=graphql-sse)', async () => {
  const { printed, sent } = await runBlock('graphql-sse');
  expect(printed).toEqual([[{ status: 'PENDING' }], [{ status: 'SUCCESSFUL' }]]);
  expect(sent.length).toBeGreaterThan(0);
});

/**
 * Runs a shell block in bash against the test gateway, with `$TOKEN` set. Asynchronously: the
 * gateway answers from this same process.
 */
async function runShell(code: string): Promise<string> {
  const script = code.replaceAll('http://127.0.0.1:4000', gateway.url);
  const { stdout, stderr } = await execFileAsync(
    'bash',
    ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script],
    { env: { PATH: process.env.PATH, TOKEN: token }, encoding: 'utf8', timeout: 15_000 },
  );
  expect(stderr).toBe('');
  return stdout;
}

/** The lines of a shell block's comments that follow a command (its documented output). */
function documentedOutput(code: string): string[] {
  return code
    .split('\n')
    .filter((line) => line.startsWith('# '))
    .map((line) => line.slice(2));
}

describe('curl', () => {
  it('answers the query and the event stream the doc shows (test=curl)', async () => {
    const { language, code } = block('curl');
    expect(language).toBe('sh');
    const output = await runShell(code);
    const [queryAnswer, ...events] = documentedOutput(code);
    expect(output.startsWith(`${queryAnswer}`)).toBe(true);
    const stream = output.slice(queryAnswer?.length ?? 0);
    expect(stream).toContain(`${events[0]}\n${events[1]}`);
    expect(stream).toMatch(/"status":"SUCCESSFUL"/);
    expect(stream).toMatch(/event: complete/);
  });

  it("answers the README's query as the README shows", async () => {
    const { code } = block('readme-curl', README);
    const output = await runShell(code);
    expect(output).toBe(`${documentedOutput(code)[0]}`);
  });
});

/**
 * The mobile settings, mirrored: the blocks as the test knows them, and the HTTP requests they
 * make (Apollo Kotlin's and iOS's APQ by GET, and their multipart subscriptions).
 */
describe('Apollo Kotlin and Apollo iOS', () => {
  const KOTLIN = `val apolloClient = ApolloClient.Builder()
    .serverUrl("https://gateway.example.com/graphql")
    .addHttpHeader("Authorization", "Bearer $token")
    .autoPersistedQueries(httpMethodForHashedQueries = HttpMethod.Get)
    .webSocketServerUrl("wss://gateway.example.com/graphql")
    .wsProtocol(GraphQLWsProtocol.Factory(connectionPayload = { mapOf("authorization" to "Bearer $token") }))
    .build()
`;
  const SWIFT = `let transport = RequestChainNetworkTransport(
  interceptorProvider: DefaultInterceptorProvider(store: store),
  endpointURL: URL(string: "https://gateway.example.com/graphql")!,
  additionalHeaders: ["Authorization": "Bearer \\(token)"],
  autoPersistQueries: true,
  useGETForPersistedQueryRetry: true
)
let client = ApolloClient(networkTransport: transport, store: store)
`;

  it('the doc holds the blocks this test mirrors', () => {
    expect(block('apollo-kotlin')).toEqual({ language: 'kotlin', code: KOTLIN });
    expect(block('apollo-ios')).toEqual({ language: 'swift', code: SWIFT });
  });

  it('APQ by GET: not found, registered, then served by hash alone', async () => {
    const query = 'query MobilePayment { transaction(txRef: "NT-USD001") { status currency } }';
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = JSON.stringify({ persistedQuery: { version: 1, sha256Hash } });
    const headers = {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'x-apollo-operation-name': 'MobilePayment',
      'apollographql-client-name': 'mobile-test',
    };
    const byHash = `${gateway.url}/graphql?operationName=MobilePayment&extensions=${encodeURIComponent(extensions)}`;
    const unknown = (await (await fetch(byHash, { headers })).json()) as {
      errors?: Array<{ message: string; extensions?: { code?: string } }>;
    };
    expect(unknown.errors?.[0]?.extensions?.code ?? unknown.errors?.[0]?.message).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
    const registered = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({
        operationName: 'MobilePayment',
        query,
        extensions: JSON.parse(extensions),
      }),
    });
    expect(await registered.json()).toEqual({
      data: { transaction: { status: 'SUCCESSFUL', currency: 'USD' } },
    });
    expect(await (await fetch(byHash, { headers })).json()).toEqual({
      data: { transaction: { status: 'SUCCESSFUL', currency: 'USD' } },
    });
  });

  it('a multipart subscription as the mobile clients ask for it', async () => {
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0, application/json',
      },
      body: JSON.stringify({
        query: 'subscription { transactionStatus(txRef: "NT-PENDINGmobile1") { status } }',
      }),
    });
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    const text = await response.text();
    expect(text.indexOf('"PENDING"')).toBeGreaterThan(0);
    expect(text.indexOf('"SUCCESSFUL"')).toBeGreaterThan(text.indexOf('"PENDING"'));
  });
});
