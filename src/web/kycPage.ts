/**
 * The KYC web page at `/kyc`: the HTML (web/kyc/index.html), its stylesheet and
 * its script (bundled into web/generated/kyc-page.js by `npm run build:web`).
 *
 * Where the page's token comes from:
 * - in production, from the merchant's own login, in the address fragment
 *   (`/kyc#token=<JWT>`): a fragment is never sent to a server, so it stays out of access logs
 *   and `Referer` headers, and the page removes it from the address bar;
 * - in sandbox mode only (the gateway made its JWT secret for this run), the gateway signs a
 *   short-lived end-user token for the demo userRef typed into the page (`/kyc?userRef=…`):
 *   `sub` = that userRef and no scope, with a `txRefs` claim listing the demo payments and a
 *   pending reference made for this page load, so it reads that user's KYC and those payments,
 *   nothing else (as a merchant's backend would list the end user's own payments).
 *
 * The page never receives an upstream credential: it is built from public settings only.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Settings of {@link createKycPageHandler}. */
export interface KycPageOptions {
  /** Address of the KYC SDK script; the page's Content-Security-Policy allows its origin. */
  sdkScriptUrl: string;
  /**
   * Signs a short-lived token for a demo end user. Given only in sandbox mode with a secret
   * made for the run (main.ts); absent, the page expects `#token=` from the merchant's login.
   */
  demoToken?: (userRef: string) => Promise<DemoToken>;
}

/** A demo end user's token, and the payments it may read. */
export interface DemoToken {
  token: string;
  /** The references in the token's `txRefs` claim, offered by the page. */
  txRefs: readonly string[];
  /** A pending reference made for this page load (one of `txRefs`), to follow live. */
  pendingTxRef: string;
}

/** Serves the page's paths; false when the path is not the page's (the router goes on). */
export type KycPageHandler = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

const WEB = new URL('../../web/', import.meta.url);
const DEFAULT_DEMO_USER = 'usr_demo_new';
// The characters of demo userRefs: enough for the sandbox's, and nothing that needs escaping.
const DEMO_USER_REF = /^[A-Za-z0-9._@:-]{1,128}$/;
const LEVEL_SLUG = /^tier_\d{1,3}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;
const PLACEHOLDER = '<!--KYC_PAGE_CONFIG-->';

/** The Content-Security-Policy of the page: its own origin, plus the SDK's for the widget. */
export function kycPageCsp(sdkScriptUrl: string): string {
  const sdk = new URL(sdkScriptUrl).origin;
  return [
    "default-src 'none'",
    `script-src 'self' ${sdk}`,
    // The widget links its own stylesheet and calls its own endpoints.
    `style-src 'self' ${sdk}`,
    `connect-src 'self' ${sdk}`,
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** JSON that is safe inside a `<script>` element (no `</script>`, no HTML comment openers). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Builds the handler; reads the page's files once. */
export function createKycPageHandler(options: KycPageOptions): KycPageHandler {
  const html = readFileSync(new URL('kyc/index.html', WEB), 'utf8');
  if (!html.includes(PLACEHOLDER)) throw new Error(`web/kyc/index.html lacks ${PLACEHOLDER}`);
  const assets = new Map([
    [
      '/kyc/page.js',
      {
        type: 'text/javascript; charset=utf-8',
        body: readFileSync(new URL('generated/kyc-page.js', WEB)),
      },
    ],
    [
      '/kyc/page.css',
      { type: 'text/css; charset=utf-8', body: readFileSync(new URL('kyc/page.css', WEB)) },
    ],
  ]);
  const csp = kycPageCsp(options.sdkScriptUrl);

  const page = async (url: URL): Promise<{ status: number; body: string }> => {
    const params = url.searchParams;
    const config: Record<string, string | readonly string[]> = {};
    const name = params.get('name');
    if (name !== null && name.length > 0 && name.length <= 200 && !CONTROL.test(name)) {
      config.name = name;
    }
    const levelSlug = params.get('levelSlug');
    if (levelSlug !== null && LEVEL_SLUG.test(levelSlug)) config.levelSlug = levelSlug;
    let status = 200;
    if (options.demoToken === undefined) {
      config.mode = 'token';
    } else {
      config.mode = 'demo';
      const userRef = params.get('userRef') ?? DEFAULT_DEMO_USER;
      if (DEMO_USER_REF.test(userRef)) {
        const demo = await options.demoToken(userRef);
        config.userRef = userRef;
        config.token = demo.token;
        config.txRefs = demo.txRefs;
        config.pendingTxRef = demo.pendingTxRef;
      } else {
        status = 400;
        config.error =
          "userRef must be 1 to 128 letters, digits or '.', '_', '@', ':', '-' for a demo token.";
      }
    }
    const tag = `<script type="application/json" id="kyc-page-config">${scriptJson(config)}</script>`;
    return { status, body: html.replace(PLACEHOLDER, tag) };
  };

  return (req, res, path) => {
    const asset = assets.get(path);
    if (path !== '/kyc' && path !== '/kyc/' && asset === undefined) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
      res.end('method not allowed\n');
      return true;
    }
    const common = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };
    if (asset !== undefined) {
      res.writeHead(200, {
        ...common,
        'content-type': asset.type,
        'content-length': String(asset.body.byteLength),
        'cache-control': 'no-cache',
      });
      res.end(req.method === 'HEAD' ? undefined : asset.body);
      return true;
    }
    page(new URL(req.url ?? '/kyc', 'http://gateway')).then(
      ({ status, body }) => {
        res.writeHead(status, {
          ...common,
          'content-type': 'text/html; charset=utf-8',
          'content-length': String(Buffer.byteLength(body)),
          // The page may carry a token: never stored by a cache or the browser's history cache.
          'cache-control': 'no-store',
          'content-security-policy': csp,
          'cross-origin-opener-policy': 'same-origin',
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('internal error\n');
      },
    );
    return true;
  };
}
