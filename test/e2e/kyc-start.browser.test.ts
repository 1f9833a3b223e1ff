/**
 * What a person does after `npm start`: open the printed /kyc address in a browser, verify the
 * demo user, and watch a demo payment turn successful. A real `src/main.ts` process in sandbox
 * mode (its own pending clock of 8 s), and real Chromium.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import {
  count,
  expectNoSecrets,
  launchChromium,
  screenshot,
  skipBrowserTests,
  type TestBrowser,
  text,
  watchedPage,
} from '../helpers/browser.ts';
import { startMain } from '../helpers/processes.ts';

const skip = skipBrowserTests('kyc-start.browser.test.ts');

// Given to the process, so that the test knows what must never reach the browser.
const PAYMENT_ACCESS_TOKEN = 'start-test-payment-token-0123456789';
const KYC_SECRET_KEY = 'start-test-kyc-secret-0123456789';

describe.skipIf(skip)('npm start, then the printed /kyc page', () => {
  let child: ChildProcess | undefined;
  let browser: TestBrowser | undefined;
  afterAll(async () => {
    await browser?.close();
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('verifies the demo user and follows a demo payment until it succeeds', async () => {
    const started = await startMain(
      { PAYMENT_ACCESS_TOKEN, KYC_SECRET_KEY },
      /KYC web page: open (http:\/\/127\.0\.0\.1:\d+\/kyc)\b/,
    );
    child = started.child;
    const url = started.found;
    const out = started.output();
    expect(out).not.toContain(KYC_SECRET_KEY);

    browser = await launchChromium();
    const watched = await watchedPage(browser.context);
    const { page } = watched;
    await page.goto(url);
    await text(page.locator('#session')).toContain('Signed in as usr_demo_new');
    // The name comes from the KYC service's record of the demo user.
    await expect
      .poll(() => page.getByLabel('Name', { exact: true }).inputValue())
      .toBe('Bola Ahmed');

    // A payment first: it stays PENDING for 8 s, while the person verifies their identity.
    await page.getByRole('button', { name: 'New demo pending payment' }).click();
    await text(page.locator('#payment-status')).toBe('PENDING');
    await text(page.locator('#payment-live')).toBe('Following live…');
    await page.getByRole('button', { name: 'Verify my identity' }).click();
    const dialog = page.getByRole('dialog', { name: 'Verify your identity' });
    await dialog.getByLabel('Male', { exact: true }).check();
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await dialog.getByLabel('Full name, as on your ID').fill('Bola Ahmed');
    await dialog.getByRole('button', { name: 'Submit' }).click();
    await text(page.locator('#kyc-status')).toMatch(/^Verified tier_1\./);
    await count(page.locator('dialog')).toBe(0);
    await text(page.locator('#levels-table tr[data-level="tier_1"]')).toContain('Verified');

    // The sandbox settles a new NT-PENDING… reference 8 s after its first request.
    await text(page.locator('#payment-status'), 15_000).toBe('SUCCESSFUL');
    await text(page.locator('#payment-live')).toBe('Final status reached.');
    await screenshot(page, '20-npm-start');

    await expectNoSecrets(watched, { PAYMENT_ACCESS_TOKEN, KYC_SECRET_KEY });
    expect(watched.errors).toEqual([]);

    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  }, 45_000);
});
