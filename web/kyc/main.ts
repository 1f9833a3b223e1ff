/**
 * The /kyc page for a merchant's end user (bundled by `npm run build:web` into
 * web/generated/kyc-page.js). It asks the gateway for the widget's public values
 * (`kycSdkConfig`), loads the provider's SDK script, starts the widget on a click and, in
 * `onSuccess`, has the gateway fetch the fresh KYC details (`refreshKycUser`). Once the user is
 * known, it follows their KYC live (`kycStatus` over SSE): a level that changes, because the
 * widget's checks passed or the KYC service decided later, shows without a reload. Its payment
 * panel shows a transaction and follows a pending one live (`transactionStatus` over SSE).
 *
 * The page holds one credential: the end user's gateway token (never an upstream key). It
 * comes from the URL fragment (`#token=<JWT>`, put there by the merchant's own login) or, in
 * sandbox mode only, from the gateway itself for a demo user (see src/web/kycPage.ts).
 */
import {
  PageKycSdkConfigDocument,
  PageKycStatusDocument,
  PageKycUserDocument,
  type PageKycUserFieldsFragment,
  PagePaymentDocument,
  type PagePaymentFieldsFragment,
  PagePaymentStatusDocument,
  PageRefreshKycUserDocument,
} from '../../src/client/generated/graphql.ts';
import { createGatewayClient, type GatewayResult } from '../../src/client/request.ts';

/** What the gateway writes into the page (`<script type="application/json" id="kyc-page-config">`). */
type PageConfig = {
  /** `demo`: sandbox mode, the gateway signed `token` for `userRef`. `token`: bring your own. */
  mode: 'demo' | 'token';
  token?: string;
  userRef?: string;
  name?: string;
  levelSlug?: string;
  /** Why the gateway could not prepare a demo token (e.g. a malformed userRef). */
  error?: string;
  /** Demo mode: the payments the token lists in its `txRefs` claim (the only ones it reads). */
  txRefs?: string[];
  /** Demo mode: a pending reference the gateway made for this page load (one of `txRefs`). */
  pendingTxRef?: string;
};

/** The SDK as the provider documents it; msg and error are read defensively. */
type KycSdk = {
  kyc(options: {
    displayInKycError: boolean;
    displayKycButtonOnVerification: boolean;
    onReady: () => void;
    onSuccess: (msg: unknown) => void;
    onFailed: (error: unknown) => void;
  }): void;
  close(): void;
};
type KycSdkConstructor = new (
  publicKey: string,
  slug: string,
  userRef: string,
  name: string,
  levelSlug: string,
) => KycSdk;

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`#${id} is missing from the page`);
  return node as T;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  className?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className !== undefined) node.className = className;
  return node;
}

function readConfig(): PageConfig {
  const text = document.getElementById('kyc-page-config')?.textContent ?? '';
  try {
    const parsed = JSON.parse(text) as PageConfig;
    return parsed.mode === 'demo' ? parsed : { ...parsed, mode: 'token' };
  } catch {
    return { mode: 'token' };
  }
}

/** The token from `#token=…`, removed from the address bar so it is not bookmarked or shared. */
function takeFragmentToken(): string | undefined {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token') ?? undefined;
  if (token !== undefined) history.replaceState(null, '', location.pathname + location.search);
  return token === '' ? undefined : token;
}

/** The claims of a JWT, read without checking it (the gateway checks it on every request). */
function claimsOf(token: string): { sub?: string; exp?: number; scope?: string } {
  try {
    const payload = token.split('.')[1] ?? '';
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(json) as Record<string, unknown>;
    return {
      ...(typeof claims.sub === 'string' && { sub: claims.sub }),
      ...(typeof claims.exp === 'number' && { exp: claims.exp }),
      ...(typeof claims.scope === 'string' && { scope: claims.scope }),
    };
  } catch {
    return {};
  }
}

/** One line per GraphQL error: `CODE: message`. */
function errorText(result: GatewayResult<unknown>): string | undefined {
  if (!result.errors?.length) return undefined;
  return result.errors
    .map(
      (e) =>
        `${typeof e.extensions?.code === 'string' ? `${e.extensions.code}: ` : ''}${e.message}`,
    )
    .join('\n');
}

/** What a widget callback argument says, whatever its shape. */
function describe(value: unknown): { code?: string; message: string } {
  if (typeof value === 'object' && value !== null) {
    const { code, message } = value as { code?: unknown; message?: unknown };
    return {
      ...(typeof code === 'string' && { code }),
      message: typeof message === 'string' ? message : JSON.stringify(value),
    };
  }
  return { message: String(value) };
}

const config = readConfig();
const token = takeFragmentToken() ?? config.token;
const claims = token === undefined ? {} : claimsOf(token);
const userRef = claims.sub;
const client = createGatewayClient({ url: '/graphql', token: () => token });

// --- who is signed in -------------------------------------------------------------------

const session = byId<HTMLParagraphElement>('session');
const userForm = byId<HTMLFormElement>('user-form');
const tokenHelp = byId<HTMLElement>('token-help');
const kycSection = byId<HTMLElement>('kyc-section');
const paymentSection = byId<HTMLElement>('payment-section');

function showSession(): void {
  if (config.mode === 'demo') {
    userForm.hidden = false;
    byId<HTMLInputElement>('user-ref').value = config.userRef ?? userRef ?? '';
  }
  if (config.error !== undefined) {
    session.textContent = config.error;
    session.className = 'error';
  }
  if (token === undefined || userRef === undefined) {
    tokenHelp.hidden = config.mode === 'demo';
    kycSection.hidden = true;
    paymentSection.hidden = true;
    if (token !== undefined) session.textContent = 'The token has no sub claim: no end user.';
    return;
  }
  const until =
    claims.exp === undefined
      ? ''
      : `, valid until ${new Date(claims.exp * 1000).toLocaleTimeString('en-GB')}`;
  const demo = config.mode === 'demo' && token === config.token;
  if (!demo) byId<HTMLElement>('user-section').hidden = true;
  const scope = claims.scope ? `scope ${claims.scope}` : 'no scope';
  session.replaceChildren(
    'Signed in as ',
    el('strong', userRef),
    ` (${demo ? 'sandbox demo token' : 'token from the address'}; ${scope}${until}).`,
  );
}

// --- KYC ----------------------------------------------------------------------------------

const kycForm = byId<HTMLFormElement>('kyc-form');
const verifyButton = byId<HTMLButtonElement>('verify');
const nameInput = byId<HTMLInputElement>('kyc-name');
const levelSelect = byId<HTMLSelectElement>('level');
const optErrors = byId<HTMLInputElement>('opt-errors');
const optButton = byId<HTMLInputElement>('opt-button');
const kycStatus = byId<HTMLElement>('kyc-status');
const kycError = byId<HTMLElement>('kyc-error');
const kycLevels = byId<HTMLElement>('kyc-levels');
const kycLive = byId<HTMLElement>('kyc-live');

let sdk: KycSdk | undefined;
let loadedScript: string | undefined;

function say(text: string): void {
  kycStatus.textContent = text;
}

function fail(text: string): void {
  kycError.textContent = text;
  kycError.hidden = text === '';
}

function renderUser(user: PageKycUserFieldsFragment | null | undefined): void {
  if (user === null || user === undefined) {
    kycLevels.replaceChildren(
      el('p', `${userRef} is not known to the KYC service yet: verify a level to begin.`, 'muted'),
    );
    return;
  }
  if (nameInput.value === '' && user.name) nameInput.value = user.name;
  const table = el('table', undefined, 'levels');
  table.id = 'levels-table';
  table.append(
    el(
      'caption',
      `${user.name ?? user.userRef}: level ${user.level}${user.verified ? ', fully verified' : ''}`,
    ),
  );
  const head = el('tr');
  for (const title of ['Level', 'Status', 'Checks']) {
    const th = el('th', title);
    th.scope = 'col';
    head.append(th);
  }
  table.append(el('thead'));
  table.tHead?.append(head);
  const body = el('tbody');
  for (const level of user.levels) {
    const row = el('tr');
    row.dataset.level = level.slug;
    const name = el('th', `${level.level} · ${level.name ?? ''} (${level.slug})`);
    name.scope = 'row';
    const status = el(
      'td',
      level.verified ? 'Verified' : 'Not verified',
      level.verified ? 'ok' : 'no',
    );
    const checks = el('td');
    if (level.checks.length === 0) checks.append(el('span', 'none', 'muted'));
    for (const check of level.checks) {
      checks.append(
        el(
          'span',
          `${check.name} ${check.passed ? '✓' : '✗'}`,
          check.passed ? 'chip ok' : 'chip no',
        ),
      );
    }
    row.append(name, status, checks);
    body.append(row);
  }
  table.append(body);
  kycLevels.replaceChildren(table);
}

async function loadUser(fresh: boolean): Promise<void> {
  if (userRef === undefined) return;
  let problem: string | undefined;
  let user: PageKycUserFieldsFragment | null | undefined;
  if (fresh) {
    const result = await client.request(PageRefreshKycUserDocument, { userRef });
    problem = errorText(result);
    user = result.data?.refreshKycUser;
  } else {
    const result = await client.request(PageKycUserDocument, { userRef });
    problem = errorText(result);
    user = result.data?.kycUser;
  }
  if (problem !== undefined) {
    fail(problem);
    return;
  }
  renderUser(user);
  if (user) followKyc();
}

let followingKyc = false;

/**
 * Follows the user's KYC live (`kycStatus`): the gateway pushes each change of level or check,
 * as the KYC service's notifications (or its polls) bring it. Started once the user is known;
 * started again when a watch ends at the gateway's watch time.
 */
function followKyc(): void {
  if (userRef === undefined || followingKyc) return;
  followingKyc = true;
  kycLive.textContent = 'Following your verification live…';
  void (async () => {
    try {
      for (;;) {
        let failed = false;
        for await (const result of client.subscribe(PageKycStatusDocument, { userRef })) {
          const problem = errorText(result);
          if (problem !== undefined) {
            fail(problem);
            failed = true;
            break;
          }
          if (result.data?.kycStatus) renderUser(result.data.kycStatus);
        }
        if (failed) break;
        // The watch time ended: follow on, after a pause (never a tight loop against the gateway).
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    } catch {
      // The stream broke (the gateway restarted, the network went): the page still works.
    }
    followingKyc = false;
    kycLive.textContent = '';
  })();
}

/** Loads the SDK script once per address (the CSP allows the SDK's origin only). */
function loadScript(url: string): Promise<void> {
  if (loadedScript === url) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = url;
    script.async = true;
    script.addEventListener('load', () => {
      loadedScript = url;
      resolve();
    });
    script.addEventListener('error', () => reject(new Error('The KYC SDK script did not load.')));
    document.head.append(script);
  });
}

let busy = false;

async function startVerification(): Promise<void> {
  if (userRef === undefined || busy) return;
  // Not `disabled`: a disabled button drops the focus, which the widget hands back on closing.
  busy = true;
  verifyButton.setAttribute('aria-disabled', 'true');
  fail('');
  say('Loading the verification widget…');
  const name = nameInput.value.trim();
  const levelSlug = levelSelect.value;
  const done = (): void => {
    busy = false;
    verifyButton.removeAttribute('aria-disabled');
  };
  try {
    const result = await client.request(PageKycSdkConfigDocument, { userRef, name, levelSlug });
    const problem = errorText(result);
    const sdkConfig = result.data?.kycSdkConfig;
    if (problem !== undefined || !sdkConfig) {
      fail(problem ?? 'The gateway gave no widget settings.');
      say('');
      done();
      return;
    }
    await loadScript(sdkConfig.scriptUrl);
    const Sdk = (window as Window & { InitServiceKyc?: KycSdkConstructor }).InitServiceKyc;
    if (typeof Sdk !== 'function') throw new Error('The KYC SDK script defines no InitServiceKyc.');
    sdk?.close();
    const widget = new Sdk(
      sdkConfig.publicKey,
      sdkConfig.slug,
      sdkConfig.userRef,
      sdkConfig.name,
      sdkConfig.levelSlug,
    );
    sdk = widget;
    const closeOnSuccess = !optButton.checked;
    widget.kyc({
      displayInKycError: optErrors.checked,
      displayKycButtonOnVerification: optButton.checked,
      onReady: () => say('The verification widget is open.'),
      onSuccess: (msg) => {
        const level = describeLevel(msg) ?? levelSlug;
        say(`Verification of ${level} accepted; asking the gateway for the new levels…`);
        void loadUser(true)
          .then(
            () => say(`Verified ${level}. The levels below come fresh from the KYC service.`),
            (error: unknown) => {
              say('');
              fail(`Verified ${level}, but the gateway did not answer: ${String(error)}`);
            },
          )
          .finally(() => {
            done();
            // Without its own button the widget waits for the page to close it.
            if (closeOnSuccess) widget.close();
          });
      },
      onFailed: (error) => {
        const { code, message } = describe(error);
        say('');
        fail(`Verification failed${code === undefined ? '' : ` (${code})`}: ${message}`);
        // A rejected check is recorded by the KYC service: show it.
        if (code === 'CHECK_REJECTED') void loadUser(true).catch(() => {});
        done();
      },
    });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
    say('');
    done();
  }
}

function describeLevel(msg: unknown): string | undefined {
  if (typeof msg !== 'object' || msg === null) return undefined;
  const { levelSlug } = msg as { levelSlug?: unknown };
  return typeof levelSlug === 'string' ? levelSlug : undefined;
}

// --- payments -----------------------------------------------------------------------------

const paymentForm = byId<HTMLFormElement>('payment-form');
const txRefInput = byId<HTMLInputElement>('tx-ref');
const paymentBox = byId<HTMLElement>('payment');
const paymentError = byId<HTMLElement>('payment-error');
const paymentLive = byId<HTMLElement>('payment-live');
let watch: AbortController | undefined;

function money(amount: number | null, currency: string): string {
  if (amount === null) return '—';
  try {
    return new Intl.NumberFormat('en', {
      style: 'currency',
      currency,
      currencyDisplay: 'code',
    }).format(amount);
  } catch {
    return `${currency} ${amount.toFixed(2)}`;
  }
}

function renderPayment(tx: PagePaymentFieldsFragment): void {
  paymentBox.hidden = false;
  byId('payment-ref').textContent = tx.txRef;
  const status = byId('payment-status');
  status.textContent = tx.status === 'UNKNOWN' ? `UNKNOWN (${tx.rawStatus})` : tx.status;
  status.className = `badge badge-${tx.status.toLowerCase()}`;
  byId('payment-paid').textContent = tx.succeeded ? 'Yes' : 'No';
  byId('payment-amount').textContent = money(tx.amount, tx.currency);
  const card = tx.card;
  byId('payment-card').textContent =
    card?.masked == null
      ? (tx.paymentChannel ?? '—')
      : [card.masked, card.cardType, card.expiry && `exp. ${card.expiry}`]
          .filter(Boolean)
          .join(' · ');
  byId('payment-time').textContent =
    tx.timestamp === null ? '—' : new Date(tx.timestamp).toISOString().replace('.000Z', 'Z');
}

async function follow(txRef: string, signal: AbortSignal): Promise<void> {
  paymentLive.textContent = 'Following live…';
  paymentLive.className = 'live';
  try {
    for await (const result of client.subscribe(PagePaymentStatusDocument, { txRef }, { signal })) {
      const problem = errorText(result);
      if (problem !== undefined) {
        paymentError.textContent = problem;
        break;
      }
      if (result.data?.transactionStatus) renderPayment(result.data.transactionStatus);
    }
    if (!signal.aborted) {
      paymentLive.textContent = 'Final status reached.';
      paymentLive.className = '';
    }
  } catch (error) {
    if (signal.aborted) return;
    paymentLive.textContent = '';
    paymentError.textContent = `The live status stopped: ${error instanceof Error ? error.message : String(error)}`;
  }
}

async function checkPayment(txRef: string): Promise<void> {
  watch?.abort();
  const controller = new AbortController();
  watch = controller;
  paymentError.textContent = '';
  paymentLive.textContent = '';
  paymentBox.hidden = true;
  const result = await client.request(
    PagePaymentDocument,
    { txRef },
    { signal: controller.signal },
  );
  if (controller.signal.aborted) return;
  const problem = errorText(result);
  if (problem !== undefined) {
    paymentError.textContent = problem;
    return;
  }
  const tx = result.data?.transaction;
  if (!tx) {
    paymentError.textContent = `The payment service does not know ${txRef}.`;
    return;
  }
  renderPayment(tx);
  // Only PENDING moves on; SUCCESSFUL and FAILED are final, and an unknown status may never end.
  if (tx.status === 'PENDING') await follow(txRef, controller.signal);
}

// --- wiring -------------------------------------------------------------------------------

showSession();
if (config.name !== undefined) nameInput.value = config.name;
if (config.levelSlug !== undefined) levelSelect.value = config.levelSlug;
const demoPending = config.mode === 'demo' ? config.pendingTxRef : undefined;
if (demoPending !== undefined) byId<HTMLButtonElement>('demo-pending').hidden = false;
// The references this demo token may read, offered as suggestions of the reference field.
if (config.mode === 'demo' && Array.isArray(config.txRefs)) {
  byId<HTMLDataListElement>('tx-ref-options').replaceChildren(
    ...config.txRefs.map((ref) => {
      const option = el('option');
      option.value = ref;
      return option;
    }),
  );
}

kycForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void startVerification();
});

paymentForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const txRef = txRefInput.value.trim();
  if (txRef !== '')
    void checkPayment(txRef).catch((error: unknown) => {
      paymentError.textContent = error instanceof Error ? error.message : String(error);
    });
});

byId<HTMLButtonElement>('demo-pending').addEventListener('click', () => {
  // The gateway made this reference for this page load and listed it in the token: the page
  // cannot make up one of its own, since the token reads only the references it lists.
  if (demoPending === undefined) return;
  txRefInput.value = demoPending;
  paymentForm.requestSubmit();
});

if (userRef !== undefined) {
  void loadUser(false).catch((error: unknown) => {
    fail(error instanceof Error ? error.message : String(error));
  });
}
