/**
 * Real Chromium for the browser tests: Debian's `/usr/bin/chromium`, driven by playwright-core,
 * with a fresh profile per launch. Without Chromium the tests are skipped with a warning on a
 * developer's machine, and fail in CI (CI=true), where .ci/run installs it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type BrowserContext,
  chromium,
  type Locator,
  type Page,
  type Response,
} from 'playwright-core';
import { expect } from 'vitest';
import { scaled } from './timeouts.ts';

export const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';

/** True when the browser tests must be skipped (no Chromium, and not in CI); says so once. */
export function skipBrowserTests(suite: string): boolean {
  if (hasChromium || inCi) return false;
  console.warn(
    `[${suite}] SKIPPED: ${CHROMIUM} is absent, so the browser tests did not run. ` +
      'Install it with `apt-get install -y chromium` (CI installs it, and fails without it).',
  );
  return true;
}

export const SCREENSHOTS = join(process.cwd(), 'test-results', 'screenshots');

/** A running Chromium with its own temporary profile. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches Chromium headless with a fresh profile (removed by `close`). */
export async function launchChromium(): Promise<TestBrowser> {
  if (!hasChromium) {
    throw new Error(
      `CI=true but ${CHROMIUM} is absent: .ci/run installs it (apt-get install chromium).`,
    );
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'kyc-chromium-'));
  // Playwright refuses --user-data-dir in args: a persistent context takes it as a parameter.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  // A locator that finds nothing fails in seconds, not after Playwright's default 30 s; a page
  // load (`page.goto`) waits as long, scaled for a busy machine.
  context.setDefaultTimeout(scaled(5000));
  context.setDefaultNavigationTimeout(scaled(15_000));
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** One response the page received, with its body (empty when it has none). */
export interface SeenResponse {
  url: string;
  status: number;
  headers: string;
  body: string;
}

/** A page that records every response, request, error and console error. */
export interface WatchedPage {
  page: Page;
  /** Every response, once its body has arrived. */
  responses(): Promise<SeenResponse[]>;
  /** Every request: URL, method, headers and body. */
  requests: { url: string; method: string; headers: Record<string, string>; body: string }[];
  /** Uncaught exceptions and console errors (CSP violations are console errors). */
  errors: string[];
  /**
   * Leaves the page (about:blank); the bodies of event streams still open then count as empty
   * (Playwright gives the body of a response only once it has ended, and a cut one never).
   */
  leave(): Promise<void>;
}

async function capture(response: Response, left: Promise<void>): Promise<SeenResponse> {
  let body = '';
  try {
    const stream = (await response.headerValue('content-type'))?.includes('text/event-stream');
    const read = response.body().then((bytes) => bytes.toString('utf8'));
    body = (stream ? await Promise.race([read, left.then(() => '')]) : await read) ?? '';
  } catch {
    // Redirects and aborted responses have no body.
  }
  return {
    url: response.url(),
    status: response.status(),
    headers: JSON.stringify(await response.allHeaders().catch(() => response.headers())),
    body,
  };
}

/** Opens a new tab that records what it sees. */
export async function watchedPage(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  const seen: Promise<SeenResponse>[] = [];
  let markLeft: () => void = () => {};
  const left = new Promise<void>((resolve) => {
    markLeft = resolve;
  });
  const watched: WatchedPage = {
    page,
    responses: () => Promise.all(seen),
    requests: [],
    errors: [],
    leave: async () => {
      await page.goto('about:blank');
      markLeft();
    },
  };
  page.on('response', (response) => seen.push(capture(response, left)));
  page.on('request', (request) => {
    watched.requests.push({
      url: request.url(),
      method: request.method(),
      headers: request.headers(),
      body: request.postData() ?? '',
    });
  });
  page.on('pageerror', (error) => watched.errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') watched.errors.push(`console: ${message.text()}`);
  });
  return watched;
}

/** Saves a full-page screenshot under test-results/screenshots/. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Asserts that none of the page's responses or requests (bodies and headers) holds any of the
 * secrets, and that the check was not vacuous (the page and the SDK script were seen).
 */
export async function expectNoSecrets(
  watched: WatchedPage,
  secrets: Record<string, string>,
): Promise<void> {
  // A live stream (the /kyc page follows the user's KYC with kycStatus) has no end while the
  // page shows it: the page is left, and a stream still open is read no further.
  await watched.leave();
  const responses = await watched.responses();
  expect(responses.some((r) => r.url.includes('/kyc/page.js') && r.body.length > 0)).toBe(true);
  for (const [name, secret] of Object.entries(secrets)) {
    expect(secret.length, name).toBeGreaterThan(8);
    for (const r of responses) {
      expect(r.body.includes(secret), `${name} in the body of ${r.url}`).toBe(false);
      expect(r.headers.includes(secret), `${name} in the headers of ${r.url}`).toBe(false);
    }
    for (const r of watched.requests) {
      expect(r.body.includes(secret), `${name} in the request to ${r.url}`).toBe(false);
      expect(JSON.stringify(r.headers).includes(secret), `${name} in a header to ${r.url}`).toBe(
        false,
      );
    }
  }
}

// playwright-core has no web-first assertions (those are @playwright/test's): vitest's
// expect.poll retries the read until the matcher passes or the time is up.
const POLL = { timeout: scaled(10_000), interval: 50 };
const QUICK = { timeout: scaled(1000) };

/** The element's text, polled: `await text(locator).toBe('…')`. */
export function text(locator: Locator, timeout = POLL.timeout) {
  return expect.poll(() => locator.textContent(QUICK).catch(() => null), { ...POLL, timeout });
}

/** Whether the element has the focus, polled. */
export function focused(locator: Locator) {
  return expect.poll(
    () =>
      locator
        .evaluate((node) => node === document.activeElement, undefined, QUICK)
        .catch(() => false),
    POLL,
  );
}

/** How many elements match, polled. */
export function count(locator: Locator) {
  return expect.poll(() => locator.count(), POLL);
}

/** Whether the element is visible, polled (false when absent). */
export function visible(locator: Locator) {
  return expect.poll(() => locator.isVisible(), POLL);
}

/** An attribute of the element (null when absent), polled. */
export function attribute(locator: Locator, name: string) {
  return expect.poll(() => locator.getAttribute(name, QUICK).catch(() => undefined), POLL);
}
