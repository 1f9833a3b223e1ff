/**
 * `npm start`: settings → (sandbox when no API URL is set) → gateway → signals.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { type KycPageDemo, startApp, VERSION } from './app.ts';
import { ALL_SCOPES, signToken } from './auth.ts';
import { type BusinessAccount, readBusinessesFile } from './businesses/accounts.ts';
import {
  type AuthConfig,
  ConfigError,
  type GatewayConfig,
  type KycUpstreamConfig,
  loadConfig,
  type PaymentUpstreamConfig,
  productionMode,
} from './config.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { startTracing } from './observability/tracing.ts';
import type { Gateway } from './server.ts';
import { closeToSettings } from './settings.ts';
import { shutDown } from './shutdown.ts';

// V8's allocation-site pretenuring watches which allocation sites make objects that outlive a
// young-generation collection, and then allocates everything those sites make directly in the
// old generation. Under load it judged the upstream shapes' parser sites long-lived (some parse
// is always under way when a young collection starts, so their objects are found alive), and the
// garbage of every later parse went straight to the old generation: it grew by about 9 MB per
// young collection, needed a major collection every few seconds and held RSS near 410 MB. Off,
// in alternating pairs through `npm run bench` (auth on): S4 +17–22 % requests per second, p99
// 62–67 → 38–45 ms; S3 +25–28 %, p99 200–235 → 150–190 ms; RSS about 410 → 330 MB. V8 reads the
// flag at each collection, so setting it here, before the first request, is enough.
setFlagsFromString('--no-allocation-site-pretenuring');
// After the process has sat idle for some seconds, V8's memory reducer collects what it can and
// from then on lets the old generation grow only slowly (by at most 1.3 times what is alive)
// until enough memory has been committed again. Under the load that follows, the gateway, whose
// old generation holds about 50 MB alive, then made a major collection every second instead of
// every ten, and its p99 at 50 connections was twice the peer's (the benchmark's full runs:
// S3 and S4 at 50 connections after the 16-connection cells). A fixed growth of four times what
// is alive (the most V8 allows itself on this kind of machine, and what it chose under steady
// load) keeps the collections as rare after an idle time as before it; the memory reducer still
// collects and gives memory back while the process is idle. Read at each collection, like the
// flag above.
setFlagsFromString('--heap-growing-percent=300');

/**
 * In production every line on stdout is one JSON object (a log pipeline reads each line as one):
 * what is printed for a person elsewhere goes through the logger there. A setting that stops the
 * start is still one plain line on stderr, before any logger exists.
 */
const production = productionMode(process.env);
/** Lines for a person (development and sandbox mode); nothing in production. */
const say = (line: string): void => {
  if (!production) console.log(line);
};
/**
 * In production, what the start says (a mistyped setting, where it serves, that it is ready) as
 * JSON lines, whatever `LOG_LEVEL` says of the request logs.
 */
const startLog = production ? createLogger({ level: 'info', redactPaths: [] }) : undefined;

function readConfig(): GatewayConfig {
  // A mistyped setting is otherwise silently ignored: named (never its value) before anything.
  for (const { variable, setting } of closeToSettings(process.env)) {
    const line = `Warning: ${variable} is not a setting; did you mean ${setting}?`;
    if (startLog) startLog.warn({ variable, setting }, line);
    else console.warn(line);
  }
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Cannot start: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
}

/** Listens on `port` (0: any free one) and resolves to the port; a failure stops the start. */
async function listen(server: Server, port: number, host: string): Promise<number> {
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  }).catch((error: unknown) => {
    console.error(`Cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}

type SandboxModule = typeof import('../sandbox/index.ts');
type SandboxBusinessOptions = NonNullable<
  Parameters<SandboxModule['startSandbox']>[0]
>['businesses'] extends readonly (infer B)[] | undefined
  ? B
  : never;

/**
 * The upstream simulators, a development tool beside src/: loaded only in sandbox mode, and
 * absent from a production install (the Dockerfile does not copy them).
 */
async function loadSandbox(): Promise<SandboxModule> {
  try {
    return await import('../sandbox/index.ts');
  } catch (error) {
    // Only the folder itself missing is this install's situation; any other failure is a bug
    // to see.
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String(message).includes('/sandbox/index.ts')) {
      throw error;
    }
    console.error(
      'Cannot start: sandbox mode needs the sandbox/ folder, which this install does not have; set PAYMENT_API_URL and KYC_API_URL',
    );
    process.exit(1);
  }
}

/** Ids of the sandbox's demo businesses. */
function demoBusinessId(index: number): string {
  return index === 0 ? 'demo' : `demo-${index + 1}`;
}

/** Reads the businesses file again and serves what it says (said in the log, never a value). */
async function reloadBusinesses(gateway: Gateway, file: string): Promise<void> {
  const { logger } = gateway;
  let accounts: BusinessAccount[];
  try {
    accounts = readBusinessesFile(file, process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    logger.error(
      { reason: error.message },
      'SIGHUP: the businesses file was not applied; the businesses served are unchanged',
    );
    return;
  }
  const report = await gateway.businesses.replace(accounts);
  logger.info(report, 'SIGHUP: businesses reloaded');
}

async function main(): Promise<void> {
  let config = readConfig();
  let webhookSecretMade = false;
  let simulators: SandboxModule | undefined;
  let sandbox: Awaited<ReturnType<SandboxModule['startSandbox']>> | undefined;
  let payment: PaymentUpstreamConfig;
  let kyc: KycUpstreamConfig;
  // Several businesses: the file's, or the sandbox's demo ones.
  let businesses = config.businesses?.accounts;
  if (config.payment && config.kyc) {
    payment = config.payment;
    kyc = config.kyc;
  } else {
    simulators = await loadSandbox();
    // The sandbox serves the file's businesses with their credentials, or demo businesses.
    const served: SandboxBusinessOptions[] | undefined =
      businesses?.map((account) => ({
        id: account.id,
        paymentAccessToken: account.paymentAccessToken,
        kycSecretKey: account.kycSecretKey,
        kycPublicKey: account.kycPublicKey,
        kycBusinessSlug: account.kycBusinessSlug,
      })) ??
      (config.sandboxBusinesses > 1
        ? Array.from({ length: config.sandboxBusinesses }, (_, i) => ({ id: demoBusinessId(i) }))
        : undefined);
    sandbox = await simulators.startSandbox({
      host: '127.0.0.1',
      slowMs: config.sandboxSlowMs,
      recordRequests: false,
      ...(served ? { businesses: served } : config.sandboxCredentials),
    });
    const { credentials } = sandbox;
    // The simulators push signed notifications to this gateway (once it listens, below): with
    // the operator's WEBHOOK_SECRET, or one made for this run.
    if (config.webhooks.secrets.length === 0 && !served) {
      webhookSecretMade = true;
      const secrets = [randomBytes(32).toString('base64url')];
      config = { ...config, webhooks: { ...config.webhooks, secrets } };
    }
    if (served && !businesses) {
      // The demo businesses: the sandbox's credentials, and a webhook secret each for this run.
      webhookSecretMade = true;
      businesses = (sandbox.businesses ?? []).map(({ id, credentials: c }) => ({
        id,
        paymentAccessToken: c.paymentAccessToken,
        kycSecretKey: c.kycSecretKey,
        kycPublicKey: c.kycPublicKey,
        kycBusinessSlug: c.kycBusinessSlug,
        webhookSecrets: [randomBytes(32).toString('base64url')],
      }));
    }
    payment = {
      baseUrl: sandbox.paymentUrl,
      accessToken: served ? '' : credentials.paymentAccessToken,
    };
    kyc = {
      baseUrl: sandbox.kycUrl,
      secretKey: served ? '' : credentials.kycSecretKey,
      publicKey: served ? '' : credentials.kycPublicKey,
      businessSlug: served ? '' : credentials.kycBusinessSlug,
      sdkScriptUrl: sandbox.sdkScriptUrl,
    };
  }
  // The business the printed token and the /kyc page's demo tokens name, when there are several.
  const firstBusiness = businesses?.[0];

  let auth: AuthConfig;
  let devToken: string | undefined;
  if (config.auth) {
    auth = config.auth;
  } else if (config.production) {
    // loadConfig never leaves production without its own setting; a ready token with every
    // scope must not be printed there in any case.
    console.error('Cannot start: AUTH_JWT_SECRET or AUTH_JWKS_URL must be set in production');
    process.exit(1);
  } else {
    // Sandbox mode without auth settings: a secret for this run only, and a ready token.
    const jwtSecret = randomBytes(32).toString('base64url');
    const { businessClaim } = config;
    auth = { mode: 'jwt', jwtSecret, ...(businessClaim !== undefined && { businessClaim }) };
    devToken = await signToken(jwtSecret, {
      sub: 'sandbox-developer',
      scope: ALL_SCOPES.join(' '),
      ...(firstBusiness &&
        businessClaim !== undefined && {
          business: { claim: businessClaim, id: firstBusiness.id },
        }),
    });
  }
  const logger: Logger = createLogger(config.log);
  if (auth.mode === 'disabled') {
    console.warn(
      '\n!!! AUTH_DISABLED=true: every caller may read everything. For local work only. !!!\n',
    );
  }
  const clearCache =
    config.production && config.cache.url !== undefined && !config.cache.encryption;

  // The OpenTelemetry SDK, from the standard OTEL_* variables (when they ask for traces).
  const tracing = await startTracing(process.env, VERSION);
  // With CACHE_URL, waits (briefly) for Redis so that the first requests share its cache.
  const gateway = await startApp({
    config,
    logger,
    ...(tracing && { tracing }),
    payment,
    kyc,
    auth,
    ...(businesses && { businesses }),
    ...(devToken && { graphiqlHeaders: { Authorization: `Bearer ${devToken}` } }),
    // The /kyc page may sign demo end-user tokens only with the secret made for this run.
    ...(devToken &&
      simulators &&
      !config.production &&
      auth.mode === 'jwt' &&
      auth.jwtSecret !== undefined && {
        kycPageDemo: {
          secret: auth.jwtSecret,
          ...simulators.demoPayments,
          ...(firstBusiness &&
            auth.businessClaim !== undefined && {
              business: { claim: auth.businessClaim, id: firstBusiness.id },
            }),
        } satisfies KycPageDemo,
      }),
  });
  if (clearCache) {
    (startLog ?? logger).warn(
      'CACHE_ENCRYPTION_KEY is not set: cached records in Redis hold personal data (names, e-mails, phone numbers) in clear, and messages between replicas are not authenticated',
    );
  }
  const server = gateway.createServer();
  const port = await listen(server, config.port, config.host);
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  // `/metrics` on a listener of its own: kept open until the process ends, so that the last
  // scrape sees the shutdown.
  const metricsServer =
    config.metricsPort === undefined ? undefined : createServer(gateway.serveMetrics);
  const metricsPort =
    metricsServer && (await listen(metricsServer, config.metricsPort ?? 0, config.host));

  const webhookSecret = config.webhooks.secrets[0];
  if (sandbox && businesses) {
    const secrets: Record<string, string> = {};
    for (const account of businesses) {
      const secret = account.webhookSecrets[0];
      if (secret !== undefined) secrets[account.id] = secret;
    }
    sandbox.sendWebhooksTo({ baseUrl: base, businesses: secrets });
  } else if (sandbox && webhookSecret !== undefined) {
    sandbox.sendWebhooksTo({ baseUrl: base, secret: webhookSecret });
  }

  if (startLog) {
    startLog.info(
      { url: `${base}/graphql`, ...(metricsPort !== undefined && { metricsPort }) },
      `Gateway serving GraphQL at ${base}/graphql`,
    );
    if (simulators) {
      startLog.warn(
        'Sandbox mode: the built-in simulators of both upstreams run in this process, with invented payments',
      );
    }
  }
  say(`Gateway serving GraphQL at ${base}/graphql`);
  if (metricsPort !== undefined) {
    say(`Metrics: ${base.replace(/:\d+$/, `:${metricsPort}`)}/metrics (not on port ${port})`);
  }
  if (config.graphiql) say(`GraphiQL: open ${base}/graphql in a browser`);
  if (config.kycPage) {
    say(
      `KYC web page: open ${base}/kyc${devToken ? ' (verify a demo user, follow a demo payment)' : " (pass the end user's token as #token=<JWT>)"}`,
    );
  }
  if (simulators && sandbox) {
    say('\nSandbox mode: no PAYMENT_API_URL / KYC_API_URL set, so the built-in');
    say('simulators of both upstreams run in this process with demo data.');
    say(simulators.describeSandbox(sandbox, { showCredentials: 'none' }));
    say(
      businesses
        ? `\nWebhooks: the simulators sign each business's notifications with its secret${webhookSecretMade ? ' (made for this run)' : ''} and send them to ${base}/webhooks/payment/<business> and ${base}/webhooks/kyc/<business>.`
        : `\nWebhooks: the simulators sign notifications (WEBHOOK_SECRET${webhookSecretMade ? ', made for this run' : ''}) and send them to ${base}/webhooks/payment when a pending payment settles and to ${base}/webhooks/kyc when KYC checks are recorded.`,
    );
  }
  if (devToken) {
    say(
      `\nA token with every scope for this run${firstBusiness ? `, of business ${firstBusiness.id}` : ''} (GraphiQL already uses it):`,
    );
    say(`  Authorization: Bearer ${devToken}`);
    if (auth.mode === 'jwt' && auth.jwtSecret && auth.businessClaim && businesses) {
      for (const other of businesses.slice(1, 3)) {
        const token = await signToken(auth.jwtSecret, {
          sub: 'sandbox-developer',
          scope: ALL_SCOPES.join(' '),
          business: { claim: auth.businessClaim, id: other.id },
        });
        say(`\nThe same for business ${other.id} (same references, its own data):`);
        say(`  Authorization: Bearer ${token}`);
      }
    }
    say('\nTry:');
    say(
      `  curl -s ${base}/graphql -H 'content-type: application/json' \\\n` +
        `    -H 'authorization: Bearer ${devToken}' \\\n` +
        `    -d '{"query":"{ transaction(txRef: \\"NT-SUCCESS001\\") { status amount currency } }"}'`,
    );
  }
  // Since the process started, module loading included.
  const readyMs = Math.round(process.uptime() * 1000);
  say(`\nReady in ${readyMs} ms.`);

  (startLog ?? logger).info(
    { port, sandbox: config.sandbox, auth: auth.mode, readyMs },
    `gateway listening; ready in ${readyMs} ms`,
  );
  startLog?.flush();

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    shutDown(server, gateway, {
      drainMs: config.shutdownDrainMs,
      graceMs: config.shutdownGraceMs,
      logger,
    })
      // Upstream pools and the cache close only after the last request used them.
      // Spans still buffered go out last.
      .then(() =>
        Promise.allSettled([
          gateway.close().then(() => tracing?.shutdown()),
          sandbox?.close(),
          new Promise((resolve) => (metricsServer ? metricsServer.close(resolve) : resolve(0))),
        ]),
      )
      .then(() => process.exit(0));
  };
  // The last line: a rejection nothing handled is logged and counted, never the process's end.
  // (Streams end with an error event instead: see src/transports/operation.ts.)
  process.on('unhandledRejection', (reason) => {
    gateway.metrics.unhandledRejections.inc();
    gateway.logger.error(
      { error: reason instanceof Error ? reason.name : typeof reason },
      'unhandled promise rejection',
    );
  });
  // SIGHUP: the businesses file read again; a file that does not read keeps the businesses served.
  const file = config.businesses?.file;
  if (file !== undefined) {
    let reloading = Promise.resolve();
    process.on('SIGHUP', () => {
      reloading = reloading.then(() => reloadBusinesses(gateway, file));
    });
  }
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

await main();
