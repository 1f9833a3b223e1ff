/**
 * The built-in sandbox: both upstream interfaces on two real HTTP servers on
 * loopback, with demo data and failure references (see README.md here).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
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

/**
 * The demo payments (not the failure references) that the gateway's /kyc page lists in a demo
 * token, and a new reference that the sandbox keeps pending for a while on its own clock.
 */
export const demoPayments = {
  txRefs: PAYMENT_DEMO_REFERENCES.map((doc) => doc.ref),
  pendingTxRef: (): string => `${PENDING_PREFIX}${randomBytes(6).toString('hex').toUpperCase()}`,
};

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
  /** The credentials the sandbox accepts (and the public ones it hands out). */
  credentials: {
    paymentAccessToken: string;
    kycSecretKey: string;
    kycPublicKey: string;
    kycBusinessSlug: string;
  };
  /** Which credentials were given in the options (the others the sandbox made up). */
  supplied: { paymentAccessToken: boolean; kycSecretKey: boolean };
  /** Every request received by either server, in order of arrival. */
  requests: RecordedRequest[];
  /** The KYC users of this sandbox. */
  kyc: KycStore;
  /**
   * From now on, signs notifications with `target.secret` and sends them to the gateway at
   * `target.baseUrl`: `/webhooks/payment` when a pending payment settles, `/webhooks/kyc` when a
   * user's checks are recorded (sandbox/webhooks.ts).
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
  const credentials = {
    paymentAccessToken:
      options.paymentAccessToken ?? `sandbox_${randomBytes(24).toString('base64url')}`,
    kycSecretKey: options.kycSecretKey ?? `sk_sandbox_${randomBytes(24).toString('base64url')}`,
    kycPublicKey: options.kycPublicKey ?? `pk_sandbox_${randomBytes(16).toString('hex')}`,
    kycBusinessSlug: options.kycBusinessSlug ?? 'demo-business',
  };
  const requests: RecordedRequest[] = [];
  const webhooks = new SandboxWebhooks();
  const store = new KycStore({ now, onChange: (userRef) => webhooks.kycChanged(userRef) });

  const paymentHandler = createPaymentHandler({
    accessToken: credentials.paymentAccessToken,
    pendingMs: (options.pendingSeconds ?? 8) * 1000,
    slowMs,
    now,
    onPending: (txRef, settlesAt, at) => webhooks.settlesAt(txRef, settlesAt, at),
  });
  const kycHandler = createKycHandler({
    secretKey: credentials.kycSecretKey,
    businessSlug: credentials.kycBusinessSlug,
    slowMs,
    store,
    publicKey: credentials.kycPublicKey,
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
    credentials,
    supplied: {
      paymentAccessToken: options.paymentAccessToken !== undefined,
      kycSecretKey: options.kycSecretKey !== undefined,
    },
    requests,
    kyc: store,
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
    'PAYMENT_ACCESS_TOKEN',
    c.paymentAccessToken,
    sandbox.supplied.paymentAccessToken,
  );
  const key = secret('KYC_SECRET_KEY', c.kycSecretKey, sandbox.supplied.kycSecretKey);
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
  if (options.showCredentials === 'none') {
    return [
      `  Payment sandbox: ${sandbox.paymentUrl}    KYC sandbox: ${sandbox.kycUrl}`,
      `  KYC SDK script:  ${sandbox.sdkScriptUrl}`,
      '',
      ...references,
      '  (more in sandbox/README.md)',
    ].join('\n');
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
    `  curl -H 'Authorization: Bearer ${token}' ${sandbox.paymentUrl}/pg/api/v1/transaction/status/NT-SUCCESS001`,
    `  curl -H 'x-secret-key: ${key}' '${sandbox.kycUrl}/api/v1/user/kyc?userRef=usr_demo_tier1&slug=${encodeURIComponent(c.kycBusinessSlug)}'`,
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
