// The Redoc page that `npm run docs` writes, in a real browser (Debian's Chromium, driven by
// playwright-core): it renders from file:// with the network cut off. `npm run docs` rewrites
// Redoc's one CDN address (its attribution logo) to data: (scripts/docs-offline.ts), so the
// page may try no outside address at all. The screenshot goes to artifacts/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { root } from '../process.js';
import { artifacts, browserRuns, launch, operation, operations, watchErrors } from './browser.js';

const runs = await browserRuns('test/browser/redoc.test.ts');

describe.skipIf(!runs)('Redoc, in Chromium', () => {
  it('Redoc from `npm run docs`: lists every operation from file:// with the network cut off, the deprecated one badged', async () => {
    const output = path.join(root, 'dist', 'docs', 'index.html');
    rmSync(output, { force: true });
    execFileSync('npm', ['run', '--silent', 'docs'], { cwd: root, stdio: 'pipe' });
    expect(existsSync(output)).toBe(true);

    const browser = await launch();
    try {
      // A tall window: the screenshot is of the window (Redoc 3 renders only the sections
      // near the one shown, so a full-page capture is mostly blank).
      const context = await browser.newContext({ viewport: { width: 1280, height: 1400 } });
      context.setDefaultTimeout(60_000);
      // Anything that is not a local file is refused, and written down.
      const attempted: string[] = [];
      await context.route('**/*', (route) => {
        const address = route.request().url();
        if (address.startsWith('file:')) return route.continue();
        attempted.push(address);
        return route.abort();
      });
      const failed: string[] = [];
      context.on('requestfailed', (request) => failed.push(request.url()));
      const page = await context.newPage();
      const errors = watchErrors(page);

      await page.goto(pathToFileURL(output).href);

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
      await page.screenshot({ path: path.join(artifacts, 'redoc.png') });

      // No request left the machine: the attribution logo is the only one even attempted.
      expect(attempted).toEqual([]);
      expect(failed).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 300_000);
});
