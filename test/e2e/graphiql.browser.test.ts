/**
 * GraphiQL as a developer meets it after `npm start` on a network without internet access: a
 * real `src/main.ts` process in sandbox mode, real Chromium with every request that leaves
 * 127.0.0.1 blocked. The page must render from the gateway alone, carry the sandbox's token,
 * and run the default query.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import {
  launchChromium,
  screenshot,
  skipBrowserTests,
  type TestBrowser,
} from '../helpers/browser.ts';
import { startMain } from '../helpers/processes.ts';
import { scaled } from '../helpers/timeouts.ts';

const skip = skipBrowserTests('graphiql.browser.test.ts');

describe.skipIf(skip)('GraphiQL, offline', () => {
  let child: ChildProcess | undefined;
  let browser: TestBrowser | undefined;
  afterAll(async () => {
    await browser?.close();
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it(
    'renders with no request outside 127.0.0.1, and runs the default query with the sandbox token',
    async () => {
      const started = await startMain(
        { LOG_LEVEL: 'warn' },
        /GraphiQL: open (http:\/\/127\.0\.0\.1:\d+\/graphql)\b/,
      );
      child = started.child;
      const url = started.found;

      browser = await launchChromium();
      const page = await browser.context.newPage();
      const blocked: string[] = [];
      await page.route('**/*', (route) => {
        const target = new URL(route.request().url());
        if (['blob:', 'data:'].includes(target.protocol) || target.hostname === '127.0.0.1') {
          return route.continue();
        }
        blocked.push(route.request().url());
        return route.abort();
      });
      const failures: string[] = [];
      page.on('pageerror', (error) => failures.push(error.message));

      await page.goto(url);
      const run = page.locator('.graphiql-execute-button');
      await run.waitFor({ state: 'visible', timeout: scaled(15_000) });
      await run.click();
      const response = page.locator('.graphiql-response');
      await expect
        .poll(async () => (await response.textContent()) ?? '', { timeout: scaled(15_000) })
        .toContain('SUCCESSFUL');
      await screenshot(page, 'graphiql-offline');

      expect(blocked).toEqual([]);
      expect(failures).toEqual([]);
      const shown = (await response.textContent()) ?? '';
      expect(shown).toContain('NT-SUCCESS001');
      // The demo reads money from the exact fields, never from the deprecated floats.
      expect(shown).toContain('"amountMoney"');
      expect(shown).toContain('"15000.50"');
      expect(shown).not.toContain('UNAUTHENTICATED');
    },
    scaled(60_000),
  );
});
