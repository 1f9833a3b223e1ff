/**
 * The /kyc page and the sandbox's KYC widget in real Chromium, against a real gateway and the
 * sandbox on loopback: verification by keyboard and mouse, rejection, a wrong public key,
 * close(), the widget's options, a token from the URL fragment, and the payment panel with a
 * final and a pending reference (an end-user token reads only the payments it lists). No page
 * response, request or script ever holds an upstream credential. Screenshots of each state go
 * to test-results/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/index.ts';
import {
  attribute,
  count,
  expectNoSecrets,
  focused,
  launchChromium,
  screenshot,
  skipBrowserTests,
  type TestBrowser,
  text,
  visible,
  type WatchedPage,
  watchedPage,
} from '../helpers/browser.ts';
import {
  sandboxUpstreams,
  startGateway,
  TEST_JWT_SECRET,
  type TestGateway,
} from '../helpers/gateway.ts';
import { metric } from '../helpers/metrics.ts';

const skip = skipBrowserTests('kyc-page.browser.test.ts');

describe.skipIf(skip)('the /kyc page in Chromium', () => {
  let sandbox: Sandbox;
  /** Sandbox mode as `npm start` serves it: demo tokens for the userRef typed in. */
  let gateway: TestGateway;
  let browser: TestBrowser;

  beforeAll(async () => {
    sandbox = await startSandbox({ pendingSeconds: 1 });
    gateway = await startGateway(
      sandboxUpstreams(sandbox),
      { KYC_PAGE: 'true', LIVE_POLL_MS: '200' },
      { kycPageDemoSecret: TEST_JWT_SECRET },
    );
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await sandbox?.close();
  });

  const secrets = (): Record<string, string> => ({
    KYC_SECRET_KEY: sandbox.credentials.kycSecretKey,
    PAYMENT_ACCESS_TOKEN: sandbox.credentials.paymentAccessToken,
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
  });

  /** Opens the page for a demo user and waits until it shown the user's KYC state. */
  async function openAs(userRef: string, base = gateway): Promise<WatchedPage> {
    const watched = await watchedPage(browser.context);
    await watched.page.goto(`${base.url}/kyc?userRef=${encodeURIComponent(userRef)}`);
    await watched.page.locator('#kyc-levels > *').first().waitFor();
    return watched;
  }

  /**
   * Checks what the tab saw and closes it. `expected` lists the console errors a test causes
   * on purpose (Chromium logs every 4xx answer to a fetch as one).
   */
  async function finish(watched: WatchedPage, expected: RegExp[] = []): Promise<void> {
    await expectNoSecrets(watched, secrets());
    expect(watched.errors.filter((e) => !expected.some((re) => re.test(e)))).toEqual([]);
    await watched.page.close();
  }

  it('verifies tier_1 by keyboard; the gateway then reads the KYC service with the secret, server-side', async () => {
    const userRef = 'usr_e2e_ok';
    const watched = await openAs(userRef);
    const { page } = watched;
    await text(page.locator('#session')).toContain(`Signed in as ${userRef}`);
    await text(page.locator('#kyc-levels')).toContain('not known to the KYC service yet');
    await page.getByLabel('Name', { exact: true }).fill('Ngozi Eze');
    await screenshot(page, '01-page');
    const before = sandbox.requests.length;

    await page.getByRole('button', { name: 'Verify my identity' }).click();
    const dialog = page.getByRole('dialog', { name: 'Verify your identity' });
    await dialog.waitFor();
    await text(page.locator('#kyc-status')).toBe('The verification widget is open.');
    await text(dialog).toContain('Basic (tier_1) · step 1 of 2');
    await screenshot(page, '02-widget-gender');

    // Keyboard only: the first choice has the focus; Space picks it, Tab reaches Continue.
    await focused(page.getByLabel('Female')).toBe(true);
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    await focused(dialog.getByRole('button', { name: 'Continue' })).toBe(true);
    await page.keyboard.press('Enter');
    const nameField = dialog.getByLabel('Full name, as on your ID');
    await focused(nameField).toBe(true);
    // An empty answer is refused in the widget, with a message tied to the field.
    await page.keyboard.press('Enter');
    await text(dialog).toContain('This field is required.');
    await page.keyboard.type('Ngozi Eze');
    await screenshot(page, '03-widget-name');
    await page.keyboard.press('Enter');

    await text(page.locator('#kyc-status')).toBe(
      'Verified tier_1. The levels below come fresh from the KYC service.',
    );
    // The page closed the widget (displayKycButtonOnVerification is off) and got the focus back.
    await count(page.locator('dialog')).toBe(0);
    await focused(page.getByRole('button', { name: 'Verify my identity' })).toBe(true);
    const row = page.locator('#levels-table tr[data-level="tier_1"]');
    await text(row).toContain('Verified');
    await text(row).toContain('gender ✓');
    await text(row).toContain('name ✓');
    await text(page.locator('#levels-table caption')).toBe('Ngozi Eze: level 1');
    await screenshot(page, '04-verified');

    // What the KYC sandbox received: the widget's calls carry the public key only, from the
    // page's origin; the KYC details were read by the gateway with the secret key.
    const seen = sandbox.requests.slice(before);
    const widgetCalls = seen.filter((r) => r.path.startsWith('/sdk/v1/') && r.method === 'POST');
    expect(widgetCalls.map((r) => r.path)).toEqual(['/sdk/v1/session', '/sdk/v1/verify']);
    for (const call of widgetCalls) {
      expect(call.headers['x-public-key']).toBe(sandbox.credentials.kycPublicKey);
      expect(call.headers.origin).toBe(gateway.url);
      expect(call.headers['x-secret-key']).toBeUndefined();
    }
    expect(JSON.parse(widgetCalls[1]?.body ?? '{}')).toMatchObject({
      userRef,
      levelSlug: 'tier_1',
      answers: { gender: 'female', name: 'Ngozi Eze' },
    });
    const verifyAt = seen.indexOf(widgetCalls[1] ?? seen[0]!);
    const reads = seen.filter((r) => r.path === '/api/v1/user/kyc');
    expect(seen.slice(verifyAt).some((r) => r.path === '/api/v1/user/kyc')).toBe(true);
    for (const read of reads) {
      expect(read.query).toEqual({ userRef, slug: sandbox.credentials.kycBusinessSlug });
      expect(read.headers['x-secret-key']).toBe(sandbox.credentials.kycSecretKey);
      expect(read.headers.origin).toBeUndefined();
      expect(read.headers['user-agent'] ?? '').not.toMatch(/Chrome/);
    }
    expect(sandbox.kyc.get(userRef)).toMatchObject({ level: 1, name: 'Ngozi Eze' });
    // The browser itself never talked to the KYC details endpoint.
    expect(watched.requests.some((r) => r.url.includes('/api/v1/user/kyc'))).toBe(false);
    await finish(watched);
  }, 30_000);

  it('shows a rejected check inside the widget and on the page (onFailed), and records it', async () => {
    const userRef = 'usr_e2e_reject';
    const watched = await openAs(userRef);
    const { page } = watched;
    await page.getByLabel('Name', { exact: true }).fill('Rex Ejected');
    await page.getByLabel('Level', { exact: true }).selectOption('tier_2');
    await page.getByRole('button', { name: 'Verify my identity' }).click();
    const dialog = page.getByRole('dialog', { name: 'Verify your identity' });
    await dialog.getByLabel('BVN (11 digits)').fill('123');
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await text(dialog).toContain('Enter 11 digits.');
    // Eleven zeros: the sandbox's documented rejected ID number.
    await dialog.getByLabel('BVN (11 digits)').fill('00000000000');
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await dialog.getByLabel('Date of birth').fill('1990-01-31');
    await dialog.getByRole('button', { name: 'Submit' }).click();

    const alert = dialog.getByRole('alert');
    await text(alert).toContain('Verification failed');
    await text(alert).toContain('The bank verification number could not be verified.');
    await focused(dialog.getByRole('button', { name: 'Try again' })).toBe(true);
    await text(page.locator('#kyc-error')).toBe(
      'Verification failed (CHECK_REJECTED): Verification rejected: bvn.',
    );
    const row = page.locator('#levels-table tr[data-level="tier_2"]');
    await text(row).toContain('Not verified');
    await text(row).toContain('bvn ✗');
    await text(row).toContain('dob ✓');
    await screenshot(page, '05-rejected-in-widget');

    // Escape closes it; the failure was already reported, so no second onFailed.
    await page.keyboard.press('Escape');
    await count(page.locator('dialog')).toBe(0);
    await text(page.locator('#kyc-error')).toContain('CHECK_REJECTED');
    await attribute(page.getByRole('button', { name: 'Verify my identity' }), 'aria-disabled').toBe(
      null,
    );

    // Try again, this time passing: onSuccess after the earlier onFailed.
    await page.getByRole('button', { name: 'Verify my identity' }).click();
    await dialog.getByLabel('BVN (11 digits)').fill('22212345678');
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await dialog.getByLabel('Date of birth').fill('1990-01-31');
    await dialog.getByRole('button', { name: 'Submit' }).click();
    await text(page.locator('#kyc-status')).toMatch(/^Verified tier_2\./);
    await text(row).toContain('Verified');
    // tier_2 alone does not lift the level: tier_1 is not verified.
    await text(page.locator('#levels-table caption')).toBe('Rex Ejected: level 0');
    await finish(watched, [/status of 422 \(Unprocessable Entity\)/]);
  }, 30_000);

  it('reports a wrong public key through onFailed only, when errors are not shown in the widget', async () => {
    const wrongKey = await startGateway(
      { ...sandboxUpstreams(sandbox), kycPublicKey: 'pk_not_the_business_key' },
      { KYC_PAGE: 'true' },
      { kycPageDemoSecret: TEST_JWT_SECRET },
    );
    try {
      const watched = await openAs('usr_demo_new', wrongKey);
      const { page } = watched;
      await page.getByLabel('Show errors inside the widget').uncheck();
      await page.getByRole('button', { name: 'Verify my identity' }).click();
      await text(page.locator('#kyc-error')).toBe(
        'Verification failed (INVALID_PUBLIC_KEY): The public key is not valid.',
      );
      // The widget closed itself and never reported ready.
      await count(page.locator('dialog')).toBe(0);
      await text(page.locator('#kyc-status')).toBe('');
      await screenshot(page, '06-wrong-public-key');
      await finish(watched, [/status of 401 \(Unauthorized\)/]);
    } finally {
      await wrongKey.close();
    }
  }, 30_000);

  it('close() removes the widget and ends its callbacks; Escape reports USER_CANCELLED', async () => {
    const watched = await openAs('usr_demo_new');
    const { page } = watched;
    await page.addScriptTag({ url: sandbox.sdkScriptUrl });
    type Sdk = new (
      ...args: string[]
    ) => {
      kyc(options: Record<string, unknown>): void;
      close(): void;
    };
    const outcome = await page.evaluate(
      ([key, slug]) =>
        new Promise<{ calls: string[]; dialogsOpen: number; dialogsAfter: number }>((resolve) => {
          const Sdk = (window as unknown as { InitServiceKyc: Sdk }).InitServiceKyc;
          const widget = new Sdk(key ?? '', slug ?? '', 'usr_e2e_close', 'Close Test', 'tier_1');
          const calls: string[] = [];
          widget.kyc({
            onReady: () => {
              calls.push('ready');
              const dialogsOpen = document.querySelectorAll('dialog[open]').length;
              widget.close();
              // Anything still in flight (the sandbox answers on loopback) would call back
              // within this time.
              setTimeout(
                () =>
                  resolve({
                    calls,
                    dialogsOpen,
                    dialogsAfter: document.querySelectorAll('dialog').length,
                  }),
                100,
              );
            },
            onSuccess: () => calls.push('success'),
            onFailed: (error: { code: string }) => calls.push(`failed:${error.code}`),
          });
        }),
      [sandbox.credentials.kycPublicKey, sandbox.credentials.kycBusinessSlug],
    );
    expect(outcome).toEqual({ calls: ['ready'], dialogsOpen: 1, dialogsAfter: 0 });

    // close() while the widget is still connecting: no callback at all.
    const early = await page.evaluate(
      ([key, slug]) =>
        new Promise<string[]>((resolve) => {
          const Sdk = (window as unknown as { InitServiceKyc: Sdk }).InitServiceKyc;
          const widget = new Sdk(key ?? '', slug ?? '', 'usr_e2e_close', 'Close Test', 'tier_1');
          const calls: string[] = [];
          widget.kyc({
            onReady: () => calls.push('ready'),
            onFailed: (error: { code: string }) => calls.push(`failed:${error.code}`),
          });
          widget.close();
          setTimeout(() => resolve(calls), 100);
        }),
      [sandbox.credentials.kycPublicKey, sandbox.credentials.kycBusinessSlug],
    );
    expect(early).toEqual([]);
    await count(page.locator('dialog')).toBe(0);

    // The user's own way out: Escape (or ×) ends the flow with USER_CANCELLED.
    await page.getByRole('button', { name: 'Verify my identity' }).click();
    await page.getByRole('dialog', { name: 'Verify your identity' }).getByLabel('Female').waitFor();
    await page.keyboard.press('Escape');
    await count(page.locator('dialog')).toBe(0);
    await text(page.locator('#kyc-error')).toBe(
      'Verification failed (USER_CANCELLED): The user closed the verification.',
    );
    await screenshot(page, '07-cancelled');
    expect(sandbox.kyc.has('usr_e2e_close')).toBe(false);
    await finish(watched);
  }, 30_000);

  it('keeps the widget open with a Done button when displayKycButtonOnVerification is on', async () => {
    const watched = await openAs('usr_e2e_button');
    const { page } = watched;
    await page.getByLabel('Name', { exact: true }).fill('Ada Button');
    await page.getByLabel('Show a button on verification').check();
    await page.getByRole('button', { name: 'Verify my identity' }).click();
    const dialog = page.getByRole('dialog', { name: 'Verify your identity' });
    await dialog.getByLabel('Male', { exact: true }).check();
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await dialog.getByLabel('Full name, as on your ID').fill('Ada Button');
    await dialog.getByRole('button', { name: 'Submit' }).click();
    await text(page.locator('#kyc-status')).toMatch(/^Verified tier_1\./);
    await text(dialog).toContain('Basic (tier_1) is verified.');
    const done = dialog.getByRole('button', { name: 'Done' });
    await focused(done).toBe(true);
    await screenshot(page, '08-verified-with-button');
    await done.click();
    await count(page.locator('dialog')).toBe(0);
    await finish(watched);
  }, 30_000);

  it('shows a final payment, and follows a pending one live until it succeeds', async () => {
    const watched = await openAs('usr_demo_tier1');
    const { page } = watched;
    const txRef = page.getByLabel('Transaction reference');
    const check = page.getByRole('button', { name: 'Check payment' });

    await txRef.fill('NT-SUCCESS001');
    await check.click();
    await text(page.locator('#payment-status')).toBe('SUCCESSFUL');
    await text(page.locator('#payment-amount')).toMatch(/^NGN\s15,000\.50$/);
    await text(page.locator('#payment-card')).toBe('411111******1111 · Visa · exp. 12/27');
    await text(page.locator('#payment-paid')).toBe('Yes');
    await text(page.locator('#payment-time')).toBe('2024-01-05T15:04:05Z');
    await text(page.locator('#payment-live')).toBe('');
    await screenshot(page, '09-payment-final');

    await txRef.fill('NT-FAILED001');
    await check.click();
    await text(page.locator('#payment-status')).toBe('FAILED');
    await text(page.locator('#payment-paid')).toBe('No');

    // The demo token is an end user's: a payment it does not list is refused.
    await txRef.fill('NT-GEN42');
    await check.click();
    await text(page.locator('#payment-error')).toContain('FORBIDDEN');
    await visible(page.locator('#payment')).toBe(false);

    // The pending reference the gateway made for this page load (and listed in the token).
    const before = sandbox.requests.length;
    await page.getByRole('button', { name: 'New demo pending payment' }).click();
    await text(page.locator('#payment-status')).toBe('PENDING');
    const pending = await txRef.inputValue();
    expect(pending).toMatch(/^NT-PENDING[A-Z0-9]+$/);
    // A fresh one: the sandbox had never been asked about it.
    expect(sandbox.requests.slice(0, before).some((r) => r.path.endsWith(`/${pending}`))).toBe(
      false,
    );
    const offered = await page
      .locator('#tx-ref-options option')
      .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(offered).toEqual(expect.arrayContaining(['NT-SUCCESS001', 'NT-FAILED001', pending]));
    await text(page.locator('#payment-ref')).toBe(pending);
    await text(page.locator('#payment-live')).toBe('Following live…');
    await screenshot(page, '10-payment-pending');
    await text(page.locator('#payment-status')).toBe('SUCCESSFUL');
    await text(page.locator('#payment-live')).toBe('Final status reached.');
    await text(page.locator('#payment-paid')).toBe('Yes');
    await screenshot(page, '11-payment-settled');
    const stream = watched.requests.find(
      (r) =>
        r.url === `${gateway.url}/graphql` &&
        r.headers.accept === 'text/event-stream' &&
        r.body.includes('PagePaymentStatus'),
    );
    expect(stream?.body).toContain('transactionStatus');
    expect(stream?.headers.authorization).toMatch(/^Bearer /);
    await finish(watched);
  }, 30_000);

  it('shows a level change and a payment settling without a reload, pushed by signed notifications', async () => {
    // A sandbox that pushes to a gateway with WEBHOOK_SECRET, as `npm start` runs them; polls
    // every 2 s (the most LIVE_POLL_MS allows), and 50 times slower once a notification covers
    // a record, so that what arrives sooner came by push.
    const secret = 'whsec_browser_test_0123456789abcdef';
    const pushing = await startSandbox({ pendingSeconds: 1 });
    const hooked = await startGateway(
      sandboxUpstreams(pushing),
      {
        KYC_PAGE: 'true',
        WEBHOOK_SECRET: secret,
        LIVE_POLL_MS: '2000',
        WEBHOOK_POLL_BACKOFF: '50',
      },
      { kycPageDemoSecret: TEST_JWT_SECRET },
    );
    pushing.sendWebhooksTo({ baseUrl: hooked.url, secret });
    const kycReads = () =>
      pushing.requests.filter(
        (r) => r.path === '/api/v1/user/kyc' && r.query.userRef === 'usr_demo_tier1',
      ).length;
    try {
      const watched = await openAs('usr_demo_tier1', hooked);
      const { page } = watched;
      await text(page.locator('#levels-table caption')).toBe('Amaka Chukwu: level 1');
      await text(page.locator('#kyc-live')).toBe('Following your verification live…');
      // Set in the page now: a reload would lose it.
      await page.evaluate(() => {
        (window as unknown as { notReloaded: boolean }).notReloaded = true;
      });

      // The KYC service completes checks on its own (a back-office review): it notifies.
      pushing.kyc.recordLevel('usr_demo_tier1', 'tier_2', [{ name: 'bvn' }, { name: 'dob' }]);
      await text(page.locator('#levels-table caption')).toBe('Amaka Chukwu: level 2');
      await text(page.locator('#levels-table tr[data-level="tier_2"]')).toContain('bvn ✓');
      // Covered now: the next change can only come by push. One read: the notification's.
      const readsBefore = kycReads();
      const changed = Date.now();
      pushing.kyc.recordLevel('usr_demo_tier1', 'tier_3', [
        { name: 'address' },
        { name: 'document' },
      ]);
      await text(page.locator('#levels-table caption')).toBe(
        'Amaka Chukwu: level 3, fully verified',
      );
      expect(Date.now() - changed).toBeLessThan(2000);
      expect(kycReads() - readsBefore).toBe(1);
      await screenshot(page, '13-kyc-level-pushed');

      // A pending payment: it settles 1 s after its first read; the first poll is 2 s after
      // the subscription, so SUCCESSFUL before that is the settlement notification's.
      await page.getByRole('button', { name: 'New demo pending payment' }).click();
      await text(page.locator('#payment-status')).toBe('PENDING');
      const pending = await page.getByLabel('Transaction reference').inputValue();
      await text(page.locator('#payment-status')).toBe('SUCCESSFUL');
      const reads = pushing.requests.filter((r) => r.path.endsWith(`/${pending}`)).length;
      // The page's read, and the notification's fetch: no poll.
      expect(reads).toBe(2);
      await text(page.locator('#payment-live')).toBe('Final status reached.');
      await screenshot(page, '14-payment-pushed');
      expect(
        await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded),
      ).toBe(true);
      expect(pushing.webhooksSent.map((s) => `${s.path} ${s.status}`)).toEqual([
        '/webhooks/kyc 202',
        '/webhooks/kyc 202',
        '/webhooks/payment 202',
      ]);
      for (const source of ['kyc', 'payment']) {
        expect(
          await metric(hooked, 'gateway_webhook_push_delay_seconds_count', { source }),
        ).toBeGreaterThanOrEqual(1);
      }
      await finish(watched);
    } finally {
      await hooked.close();
      await pushing.close();
    }
  }, 30_000);

  it('takes the token from #token= when the gateway signs none (production), and drops it from the address', async () => {
    const production = await startGateway(sandboxUpstreams(sandbox), { KYC_PAGE: 'true' });
    try {
      const token = await production.token({
        sub: 'usr_demo_tier1',
        scope: null,
        txRefs: ['NT-UNKNOWN999'],
      });
      const watched = await watchedPage(browser.context);
      const { page } = watched;
      await page.goto(`${production.url}/kyc#token=${token}`);
      await text(page.locator('#session')).toContain('Signed in as usr_demo_tier1');
      await text(page.locator('#levels-table caption')).toBe('Amaka Chukwu: level 1');
      expect(page.url()).toBe(`${production.url}/kyc`);
      await visible(page.locator('#user-form')).toBe(false);
      await visible(page.getByRole('button', { name: 'New demo pending payment' })).toBe(false);
      // This end-user token reads only the payment it lists: the gateway refuses another, the
      // page shows it; the listed one is read (the payment service does not know it).
      await page.getByLabel('Transaction reference').fill('NT-SUCCESS001');
      await page.getByRole('button', { name: 'Check payment' }).click();
      await text(page.locator('#payment-error')).toContain('FORBIDDEN');
      await page.getByLabel('Transaction reference').fill('NT-UNKNOWN999');
      await page.getByRole('button', { name: 'Check payment' }).click();
      await text(page.locator('#payment-error')).toBe(
        'The payment service does not know NT-UNKNOWN999.',
      );
      await visible(page.locator('#payment')).toBe(false);
      await screenshot(page, '12-token-from-fragment');

      // Without a token: how to get one, and nothing else.
      await page.goto(`${production.url}/kyc`);
      await visible(page.locator('#token-help')).toBe(true);
      await visible(page.locator('#kyc-section')).toBe(false);
      await finish(watched);
    } finally {
      await production.close();
    }
  }, 30_000);
});
