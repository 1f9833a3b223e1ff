/**
 * The built-in sandbox: both upstream interfaces on two real HTTP servers on
 * loopback, with demo data and failure references (see README.md here).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  type DemoBusiness,
  demoKycUsers,
  FIRST_BUSINESS,
  KYC_DEMO_USERS,
  KYC_FAILURE_USERS,
  PAYMENT_DEMO_REFERENCES,
  PAYMENT_FAILURE_REFERENCES,
  PENDING_PREFIX,
  type ReferenceDoc,
} from './data.ts';
import { flatHeaders, type SandboxHandler, sendJson } from './http.ts';
import { createKycHandler } from './kyc.ts';
import { KycStore } from './kyc-store.ts';
import { createPaymentHandler } from './payment.ts';
import { SandboxWebhooks, type WebhookTarget } from './webhooks.ts';

export type { KycCheckInput } from './kyc-store.ts';
export { KycStore } from './kyc-store.ts';
export type { SentWebhook, WebhookTarget } from './webhooks.ts';

/**
 * The demo payments (not the failure references) that the gateway's /kyc page lists in a demo
 * token, and a new reference that the sandbox keeps pending for a while on its own clock.
 */
export const demoPayments = {
  txRefs: PAYMENT_DEMO_REFERENCES.map((doc) => doc.ref),
  pendingTxRef: (): string => `${PENDING_PREFIX}${randomBytes(6).toString('hex').toUpperCase()}`,
};

/**
 * One business of a sandbox serving several ({@link SandboxOptions.businesses}). Every
 * business answers the same references with data of its own; its credentials name it.
 */
export interface SandboxBusinessOptions {
  /** 1 to 64 letters, digits, `-` or `_`; unique among the businesses. */
  id: string;
  /** The bearer token of this business at the payment interface; random when absent. */
  paymentAccessToken?: string;
  /** The `x-secret-key` of this business at the KYC interface; random when absent. */
  kycSecretKey?: string;
  /** The public key handed to the SDK for this business; random `pk_sandbox_…` when absent. */
  kycPublicKey?: string;
  /** The slug the KYC interface accepts with this business's keys; default `{id}-business`. */
  kycBusinessSlug?: string;
}

/** The credentials of one business: those the sandbox accepts, and the public ones. */
export interface SandboxCredentials {
  paymentAccessToken: string;
  kycSecretKey: string;
  kycPublicKey: string;
  kycBusinessSlug: string;
}

/** One business of a running sandbox that serves several. */
export interface SandboxBusiness {
  id: string;
  credentials: SandboxCredentials;
  /** Which credentials were given in the options (the others the sandbox made up). */
  supplied: { paymentAccessToken: boolean; kycSecretKey: boolean };
  /** This business's KYC users. */
  kyc: KycStore;
}

/** Settings of {@link startSandbox}; every one is optional. */
export interface SandboxOptions {
  /** Address both servers listen on; default `127.0.0.1`. */
  host?: string;
  /** Port of the payment interface; default 0 (a free port). */
  paymentPort?: number;
  /** Port of the KYC interface; default 0 (a free port). */
  kycPort?: number;
  /** The bearer token the payment interface accepts; random when absent. */
  paymentAccessToken?: string;
  /** The `x-secret-key` the KYC interface accepts; random when absent. */
  kycSecretKey?: string;
  /** The public key handed to the SDK; random `pk_sandbox_…` when absent. */
  kycPublicKey?: string;
  /** The business slug the KYC interface accepts; default `demo-business`. */
  kycBusinessSlug?: string;
  /**
   * Serve several businesses at the same addresses, told apart by their credentials, each
   * with its own data and state (KYC users, pending clocks, one-off failures). The first
   * answers the documented demo data; the others answer the same references with their own
   * customers, amounts and order references (sandbox/README.md). Not together with the four
   * credential settings above, which describe the one business of a sandbox without this.
   */
  businesses?: readonly SandboxBusinessOptions[];
  /** How long a `NT-PENDING…` transaction stays PENDING after its first request; default 8. */
  pendingSeconds?: number;
  /** Delay of the slow references (`NT-SLOW001`, `usr_kyc_slow`); default 10000. */
  slowMs?: number;
  /** The clock; default `Date.now`. */
  now?: () => number;
  /**
   * Whether to keep every request in `requests` (default true, for tests). The gateway's
   * in-process sandbox turns it off so that a long run does not grow without bound.
   */
  recordRequests?: boolean;
}

/** One request as a sandbox server received it. */
export interface RecordedRequest {
  service: 'payment' | 'kyc';
  method: string;
  /** The path without the query string. */
  path: string;
  /** The query parameters; the first value wins when a name repeats. */
  query: Record<string, string>;
  /** Lower-case names; repeated headers joined by `, `. Credentials are recorded as sent. */
  headers: Record<string, string>;
  body: string;
}

/** A running sandbox. */
export interface Sandbox {
  /** Base address of the payment interface (`PAYMENT_API_URL`). */
  paymentUrl: string;
  /** Base address of the KYC interface (`KYC_API_URL`). */
  kycUrl: string;
  /** Address of the SDK script (`KYC_SDK_SCRIPT_URL`). */
  sdkScriptUrl: string;
  /**
   * The credentials the sandbox accepts (and the public ones it hands out); with several
   * businesses, the first business's.
   */
  credentials: SandboxCredentials;
  /** Which credentials were given in the options (the others the sandbox made up). */
  supplied: { paymentAccessToken: boolean; kycSecretKey: boolean };
  /** The businesses, in the order of the options; absent without `businesses`. */
  businesses?: readonly SandboxBusiness[];
  /** Every request received by either server, in order of arrival. */
  requests: RecordedRequest[];
  /** The KYC users of this sandbox; with several businesses, the first business's. */
  kyc: KycStore;
  /**
   * From now on, sends notifications to the gateway at `target.baseUrl`, signed: with
   * `target.secret` to `/webhooks/payment` when a pending payment settles and `/webhooks/kyc`
   * when a user's checks are recorded (the first business's only); with `target.businesses`
   * (id → secret) a business's to `/webhooks/payment/{id}` and `/webhooks/kyc/{id}`, signed
   * with its secret (sandbox/webhooks.ts).
   * @throws TypeError for an empty secret, or a business the sandbox does not serve.
   */
  sendWebhooksTo(target: WebhookTarget): void;
  /** The notifications sent so far, and the gateway's answers (the last 1,000). */
  webhooksSent: SandboxWebhooks['sent'];
  /** Closes both servers, dropping keep-alive connections and delayed answers. Safe to call twice. */
  close(): Promise<void>;
}

// A client that sends more than this is not one of ours; the sandbox has no use for big bodies.
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Starts both simulated upstream interfaces and resolves once both listen.
 * Each sandbox has its own state (KYC users, pending clocks, flaky references).
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? (() => Date.now());
  const slowMs = options.slowMs ?? 10_000;
  const requests: RecordedRequest[] = [];
  const several = options.businesses !== undefined;
  const specs = businessSpecs(options);
  const webhooks = new SandboxWebhooks(several ? specs.map((b) => b.key) : undefined);
  const served = specs.map((spec) => ({
    ...spec,
    store: new KycStore({
      now,
      users: demoKycUsers(spec.data),
      onChange: (userRef) => webhooks.kycChanged(spec.key, userRef),
    }),
  }));

  const businesses = served.map(
    (b): SandboxBusiness => ({
      id: b.key,
      credentials: b.credentials,
      supplied: b.supplied,
      kyc: b.store,
    }),
  );
  const [first] = businesses;
  if (first === undefined) {
    // businessSpecs never returns an empty list; this only tells the compiler.
    throw new Error('The sandbox has no business');
  }

  const paymentHandler = createPaymentHandler({
    accounts: served.map((b) => ({
      accessToken: b.credentials.paymentAccessToken,
      business: b.data,
      onPending: (txRef: string, settlesAt: number, at: number) =>
        webhooks.settlesAt(b.key, txRef, settlesAt, at),
    })),
    pendingMs: (options.pendingSeconds ?? 8) * 1000,
    slowMs,
    now,
  });
  const kycHandler = createKycHandler({
    accounts: served.map((b) => ({
      secretKey: b.credentials.kycSecretKey,
      businessSlug: b.credentials.kycBusinessSlug,
      publicKey: b.credentials.kycPublicKey,
      store: b.store,
      business: b.data,
    })),
    slowMs,
    now,
  });

  const record = options.recordRequests ?? true;
  const paymentServer = createSandboxServer('payment', paymentHandler, requests, record);
  const kycServer = createSandboxServer('kyc', kycHandler, requests, record);

  let paymentPort: number;
  let kycPort: number;
  try {
    paymentPort = await listen(paymentServer, options.paymentPort ?? 0, host);
    kycPort = await listen(kycServer, options.kycPort ?? 0, host);
  } catch (error) {
    await Promise.all([stop(paymentServer), stop(kycServer)]);
    paymentHandler.close();
    kycHandler.close();
    throw error;
  }

  const urlHost = host.includes(':') ? `[${host}]` : host;
  const kycUrl = `http://${urlHost}:${kycPort}`;
  let closing: Promise<void> | undefined;

  return {
    paymentUrl: `http://${urlHost}:${paymentPort}`,
    kycUrl,
    sdkScriptUrl: `${kycUrl}/sdk/kyc.js`,
    credentials: first.credentials,
    supplied: first.supplied,
    ...(several && { businesses }),
    requests,
    kyc: first.kyc,
    sendWebhooksTo: (target) => webhooks.sendTo(target),
    webhooksSent: webhooks.sent,
    close() {
      closing ??= (async () => {
        webhooks.close();
        paymentHandler.close();
        kycHandler.close();
        await Promise.all([stop(paymentServer), stop(kycServer)]);
      })();
      return closing;
    },
  };
}

/** A business id: as the gateway's businesses file allows. */
const BUSINESS_ID = /^[A-Za-z0-9_-]{1,64}$/;

const CREDENTIAL_FIELDS = [
  'paymentAccessToken',
  'kycSecretKey',
  'kycPublicKey',
  'kycBusinessSlug',
] as const;

/** One business to serve, before its servers' state exists. */
type BusinessSpec = {
  /** Its id (`''` in a sandbox serving one business). */
  key: string;
  data: DemoBusiness;
  credentials: SandboxCredentials;
  supplied: SandboxBusiness['supplied'];
};

/** The credentials of a business: those given, random ones for the others. */
function credentialsOf(
  given: Partial<SandboxCredentials>,
  defaultSlug: string,
): Pick<BusinessSpec, 'credentials' | 'supplied'> {
  return {
    credentials: {
      paymentAccessToken:
        given.paymentAccessToken ?? `sandbox_${randomBytes(24).toString('base64url')}`,
      kycSecretKey: given.kycSecretKey ?? `sk_sandbox_${randomBytes(24).toString('base64url')}`,
      kycPublicKey: given.kycPublicKey ?? `pk_sandbox_${randomBytes(16).toString('hex')}`,
      kycBusinessSlug: given.kycBusinessSlug ?? defaultSlug,
    },
    supplied: {
      paymentAccessToken: given.paymentAccessToken !== undefined,
      kycSecretKey: given.kycSecretKey !== undefined,
    },
  };
}

/**
 * The businesses the options ask for, checked: messages name the business and the setting,
 * never a value.
 */
function businessSpecs(options: SandboxOptions): BusinessSpec[] {
  const list = options.businesses;
  if (list === undefined) {
    return [{ key: '', data: FIRST_BUSINESS, ...credentialsOf(options, 'demo-business') }];
  }
  const problem = (message: string): never => {
    throw new TypeError(`startSandbox: ${message}`);
  };
  if (!Array.isArray(list) || list.length === 0) {
    problem('`businesses` must list at least one business');
  }
  for (const field of CREDENTIAL_FIELDS) {
    if (options[field] !== undefined) {
      problem(`\`${field}\` is set for each business in \`businesses\`, not beside it`);
    }
  }
  const specs = list.map((b, index): BusinessSpec => {
    if (typeof b?.id !== 'string' || !BUSINESS_ID.test(b.id)) {
      problem(`business ${index + 1}: \`id\` must be 1 to 64 letters, digits, "-" or "_"`);
    }
    for (const field of CREDENTIAL_FIELDS) {
      const value = b[field];
      if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) {
        problem(`business "${b.id}": \`${field}\` must be a non-empty string`);
      }
    }
    return { key: b.id, data: { index, id: b.id }, ...credentialsOf(b, `${b.id}-business`) };
  });
  // A credential names its business: two businesses sharing one would make the answer ambiguous.
  for (const field of ['key', ...CREDENTIAL_FIELDS] as const) {
    const seen = new Map<string, string>();
    for (const spec of specs) {
      const value = field === 'key' ? spec.key : spec.credentials[field];
      const other = seen.get(value);
      if (other !== undefined) {
        problem(
          field === 'key'
            ? `two businesses have the id "${spec.key}"`
            : `businesses "${other}" and "${spec.key}" have the same \`${field}\``,
        );
      }
      seen.set(value, spec.key);
    }
  }
  return specs;
}

/**
 * A multi-line description of a running sandbox: addresses, credentials and
 * the demo and failure references. Meant for the console of a developer's
 * machine; it prints the sandbox's own credentials on purpose.
 */
export function describeSandbox(
  sandbox: Sandbox,
  options: { showCredentials: 'all' | 'generated' | 'none' } = { showCredentials: 'generated' },
): string {
  const { credentials: c } = sandbox;
  const table = (docs: readonly ReferenceDoc[]): string[] => {
    const width = Math.max(...docs.map((d) => d.ref.length));
    return docs.map((d) => `    ${d.ref.padEnd(width)}  ${d.description}`);
  };
  // A credential the operator supplied is theirs: it is never echoed, only one the sandbox
  // made up for this run (and not even that when the gateway runs the sandbox in-process).
  const secret = (name: string, value: string, supplied: boolean): string =>
    options.showCredentials === 'all' || (options.showCredentials === 'generated' && !supplied)
      ? value
      : `<${name}>`;
  const token = secret(
    sandbox.businesses ? 'paymentAccessToken' : 'PAYMENT_ACCESS_TOKEN',
    c.paymentAccessToken,
    sandbox.supplied.paymentAccessToken,
  );
  const key = secret(
    sandbox.businesses ? 'kycSecretKey' : 'KYC_SECRET_KEY',
    c.kycSecretKey,
    sandbox.supplied.kycSecretKey,
  );
  const curls = [
    `  curl -H 'Authorization: Bearer ${token}' ${sandbox.paymentUrl}/pg/api/v1/transaction/status/NT-SUCCESS001`,
    `  curl -H 'x-secret-key: ${key}' '${sandbox.kycUrl}/api/v1/user/kyc?userRef=usr_demo_tier1&slug=${encodeURIComponent(c.kycBusinessSlug)}'`,
  ];
  const businesses = (sandbox.businesses ?? []).map((b, index) => ({
    id: b.id,
    credentials: b.credentials,
    token: secret(
      'paymentAccessToken',
      b.credentials.paymentAccessToken,
      b.supplied.paymentAccessToken,
    ),
    key: secret('kycSecretKey', b.credentials.kycSecretKey, b.supplied.kycSecretKey),
    data:
      index === 0
        ? 'the demo data below'
        : 'the same references with its own customers, amounts and merchantRefs',
  }));
  const references = [
    '  Demo transactions:',
    ...table(PAYMENT_DEMO_REFERENCES),
    '  Failure transactions:',
    ...table(PAYMENT_FAILURE_REFERENCES),
    '  Demo KYC users:',
    ...table(KYC_DEMO_USERS),
    '  Failure KYC users:',
    ...table(KYC_FAILURE_USERS),
  ];
  const inProcess = [
    `  Payment sandbox: ${sandbox.paymentUrl}    KYC sandbox: ${sandbox.kycUrl}`,
    `  KYC SDK script:  ${sandbox.sdkScriptUrl}`,
  ];
  if (businesses.length > 0) {
    const addresses = [
      `  PAYMENT_API_URL=${sandbox.paymentUrl}`,
      `  KYC_API_URL=${sandbox.kycUrl}`,
      `  KYC_SDK_SCRIPT_URL=${sandbox.sdkScriptUrl}`,
    ];
    if (options.showCredentials === 'none') {
      return [
        ...inProcess,
        `  ${businesses.length} businesses at these addresses, told apart by their credentials:`,
        ...businesses.map((b) => `    ${b.id}  slug ${b.credentials.kycBusinessSlug}  (${b.data})`),
        '',
        ...references,
        '  (more in sandbox/README.md)',
      ].join('\n');
    }
    return [
      `Sandbox of the payment and KYC interfaces, serving ${businesses.length} businesses`,
      '',
      ...addresses,
      '',
      ...businesses.flatMap((b) => [
        `  Business ${b.id} (${b.data}):`,
        `    paymentAccessToken=${b.token}`,
        `    kycSecretKey=${b.key}`,
        `    kycPublicKey=${b.credentials.kycPublicKey}`,
        `    kycBusinessSlug=${b.credentials.kycBusinessSlug}`,
      ]),
      '',
      `  As business ${businesses[0]?.id ?? ''}:`,
      ...curls,
      '',
      ...references,
    ].join('\n');
  }
  if (options.showCredentials === 'none') {
    return [...inProcess, '', ...references, '  (more in sandbox/README.md)'].join('\n');
  }
  return [
    'Sandbox of the payment and KYC interfaces',
    '',
    `  PAYMENT_API_URL=${sandbox.paymentUrl}`,
    `  PAYMENT_ACCESS_TOKEN=${token}`,
    `  KYC_API_URL=${sandbox.kycUrl}`,
    `  KYC_SECRET_KEY=${key}`,
    `  KYC_PUBLIC_KEY=${c.kycPublicKey}`,
    `  KYC_BUSINESS_SLUG=${c.kycBusinessSlug}`,
    `  KYC_SDK_SCRIPT_URL=${sandbox.sdkScriptUrl}`,
    '',
    ...curls,
    '',
    ...references,
  ].join('\n');
}

function createSandboxServer(
  service: RecordedRequest['service'],
  handler: SandboxHandler,
  requests: RecordedRequest[],
  record: boolean,
): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
      } else {
        chunks.push(chunk);
      }
    });
    // An aborted request has no one to answer; only keep the error from going unhandled.
    req.on('error', () => {});
    req.on('end', () => {
      const url = parseRequestUrl(req.url);
      const body = Buffer.concat(chunks).toString('utf8');
      if (record) {
        requests.push({
          service,
          method: req.method ?? '',
          path: url?.pathname ?? req.url ?? '',
          query: url === undefined ? {} : firstValues(url.searchParams),
          headers: flatHeaders(req),
          body,
        });
      }
      if (tooLarge) {
        sendJson(res, 413, { message: 'Payload too large', error: true });
        return;
      }
      if (url === undefined) {
        sendJson(res, 400, { message: 'Bad request', error: true });
        return;
      }
      try {
        handler.handle(req, res, url, body);
      } catch {
        sendJson(res, 500, { message: 'Internal server error', error: true });
      }
    });
  });
}

function parseRequestUrl(raw: string | undefined): URL | undefined {
  if (raw === undefined) {
    return undefined;
  }
  try {
    // Prefixing (not `new URL(raw, base)`) keeps a path like `//x/y` a path instead of a host.
    return raw.startsWith('/') ? new URL(`http://sandbox${raw}`) : new URL(raw);
  } catch {
    return undefined;
  }
}

function firstValues(params: URLSearchParams): Record<string, string> {
  const first = new Map<string, string>();
  for (const [name, value] of params) {
    if (!first.has(name)) {
      first.set(name, value);
    }
  }
  // fromEntries defines own properties, so a parameter named __proto__ stays data.
  return Object.fromEntries(first);
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      if (address !== null && typeof address === 'object') {
        resolve(address.port);
      } else {
        reject(new Error('The sandbox server has no TCP address'));
      }
    });
  });
}

function stop(server: Server): Promise<void> {
  if (!server.listening) {
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    server.close((error) => (error === undefined ? resolve() : reject(error)));
    // Keep-alive sockets would otherwise hold close() open until they time out.
    server.closeAllConnections();
  });
}
