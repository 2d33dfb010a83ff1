// Both Redoc pages in a real browser (Debian's Chromium, driven by playwright-core): the one
// `npm run docs` writes, from file://, and the one the service serves at /docs/redoc, from a
// running service under its pages' security headers; every other address is refused. Both
// rewrite Redoc's one CDN address (its attribution logo) to data: (src/plugins/redoc.ts's
// `withoutCdn`), so a page may try no outside address at all. Screenshots go to artifacts/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from '../process.js';
import { listen, type ListeningApp } from '../support/wire.js';
import { artifacts, browserRuns, launch, operation, operations, watchErrors } from './browser.js';

const runs = await browserRuns('test/browser/redoc.test.ts');

/**
 * Opens `url` with every request outside `allowed` refused, and checks what Redoc renders:
 * every operation under its tag, the deprecated one badged, no error, no request refused.
 */
async function expectRedocRenders(browser: Browser, url: string, allowed: (address: string) => boolean, screenshot: string): Promise<void> {
  // A tall window: the screenshot is of the window (Redoc 3 renders only the sections
  // near the one shown, so a full-page capture is mostly blank).
  const context = await browser.newContext({ viewport: { width: 1280, height: 1400 } });
  try {
    context.setDefaultTimeout(60_000);
    // Anything not allowed is refused, and written down.
    const attempted: string[] = [];
    await context.route('**/*', (route) => {
      const address = route.request().url();
      if (allowed(address)) return route.continue();
      attempted.push(address);
      return route.abort();
    });
    const failed: string[] = [];
    context.on('requestfailed', (request) => failed.push(request.url()));
    const page = await context.newPage();
    const errors = watchErrors(page);

    await page.goto(url);

    // The sidebar lists every operation's summary under its tag, once the tag is opened.
    const menuLink = (text: string) => page.locator('[data-component-name="Menu/MenuItem"] > a').filter({ has: page.locator(`span[data-text="${text}"]`) });
    // The contract's tags, the last first, so that the screenshot ends on the first (pets).
    const tags = [...new Set(operations.map(({ tag }) => tag))].reverse();
    const listed: string[] = [];
    for (const tag of tags) {
      await menuLink(tag).click();
      for (const { operationId, summary } of operations.filter((candidate) => candidate.tag === tag)) {
        await menuLink(summary).waitFor();
        listed.push(operationId);
      }
    }
    expect(listed.sort()).toEqual(operations.map(({ operationId }) => operationId).sort());

    // A section opens from its link; its heading carries a "Deprecated" badge exactly on the
    // deprecated operation (empty lines dropped).
    for (const { summary, deprecated } of [operation('getPet'), operation('listPets')]) {
      await menuLink(summary).click();
      const heading = page.locator('[data-item-kind="httpItem"] h2').filter({ hasText: summary });
      await heading.waitFor();
      // Under load Redoc can re-render the section just after the heading shows: wait for its text.
      await expect.poll(async () => (await heading.innerText()).trim(), { timeout: 60_000 }).not.toBe('');
      const lines = (await heading.innerText()).split('\n').map((line) => line.trim()).filter((line) => line !== '');
      expect(lines[0]).toBe(summary);
      if (deprecated) expect(lines, summary).toContain('Deprecated');
      else expect(lines, summary).not.toContain('Deprecated');
    }

    // Nothing rendered an error: no error page or banner (role=alert), no exception, no
    // console error but the failed attribution logo.
    expect(await page.getByRole('alert').count()).toBe(0);
    const text = await page.locator('body').innerText();
    expect(text).not.toContain('Something went wrong');
    expect(text).not.toContain('Failed to load API description');
    expect(errors.pageErrors).toEqual([]);
    expect(errors.consoleErrors).toEqual([]);
    // The logo failed and Redoc dropped it rather than showing a broken image.
    await page.locator('img[alt="redocly logo"]').waitFor({ state: 'detached' });

    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, screenshot) });

    // No request was refused, nor failed: nothing was even attempted elsewhere.
    expect(attempted).toEqual([]);
    expect(failed).toEqual([]);
  } finally {
    await context.close();
  }
}

describe.skipIf(!runs)('Redoc, in Chromium', () => {
  let browser: Browser;
  let t: ListeningApp;
  beforeAll(async () => {
    [browser, t] = await Promise.all([launch(), listen()]);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), t?.close()]);
  });

  it('Redoc from `npm run docs`: lists every operation from file:// with the network cut off, the deprecated one badged', async () => {
    const output = path.join(root, 'dist', 'docs', 'index.html');
    rmSync(output, { force: true });
    execFileSync('npm', ['run', '--silent', 'docs'], { cwd: root, stdio: 'pipe' });
    expect(existsSync(output)).toBe(true);
    await expectRedocRenders(browser, pathToFileURL(output).href, (address) => address.startsWith('file:'), 'redoc.png');
  }, 300_000);

  it('Redoc served at /docs/redoc: lists every operation from the running service alone, under its security headers, the deprecated one badged', async () => {
    await expectRedocRenders(browser, `${t.origin}/docs/redoc`, (address) => new URL(address).origin === t.origin, 'redoc-served.png');
  }, 300_000);
});
