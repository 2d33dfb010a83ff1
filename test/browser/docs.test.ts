// The documentation in a real browser (Debian's Chromium, driven by playwright-core):
// Swagger UI at /docs, served by the running service, works end to end from its own host
// alone; the Redoc page from `npm run docs` renders from file:// with the network cut off.
// Screenshots go to artifacts/ (git-ignored) for a human to look at.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helper.js';
import { apikey, root, startServer } from '../process.js';
import { CHROMIUM, requires } from '../support/requires.js';

const haveChromium = existsSync(CHROMIUM);
const runs = await requires('chromium', 'test/browser/docs.test.ts (the /docs pages in a browser)');
const artifacts = path.join(root, 'artifacts');

// The operations in openapi/v1.yaml: operationId, tag and summary.
const operations = [
  { operationId: 'listPets', tag: 'pets', summary: 'List animals' },
  { operationId: 'createPet', tag: 'pets', summary: 'Add an animal' },
  { operationId: 'getPet', tag: 'pets', summary: 'Get an animal (deprecated)' },
  { operationId: 'listOrders', tag: 'store', summary: 'List orders (experimental, not implemented)' },
] as const;

// `npm run docs` rewrites Redoc's one CDN address (its attribution logo) to data:, see
// scripts/docs-offline.ts, so the page may try no outside address at all.

function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Everything the page reports as broken: uncaught exceptions and console errors. */
function watchErrors(page: Page): { pageErrors: string[]; consoleErrors: { text: string; url: string }[] } {
  const pageErrors: string[] = [];
  const consoleErrors: { text: string; url: string }[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push({ text: message.text(), url: message.location().url });
  });
  return { pageErrors, consoleErrors };
}

describe.skipIf(!runs)('the documentation in Chromium', () => {
  beforeAll(() => {
    // Only reached without Chromium when CI=true: CI installs it, so its absence is a broken machine.
    if (!haveChromium) throw new Error(`Chromium is missing at ${CHROMIUM}, and CI=true: CI must install it (apt-get install chromium). Outside CI this suite is skipped (test/support/requires.ts).`);
    mkdirSync(artifacts, { recursive: true });
  });

  it('Swagger UI at /docs: the four operations, getPet deprecated, this server first, Authorize, then Try it out as a person would: createPet twice (both 201), getPet of the second, listPets shows both', async () => {
    const db = await createTestDatabase();
    let server: Awaited<ReturnType<typeof startServer>> | undefined;
    let browser: Browser | undefined;
    try {
      // The key exists before the service starts, so its cache has it from the first request.
      const created = await apikey(['create', 'browser'], db.url);
      server = await startServer({ DATABASE_URL: db.url });
      const { url } = server;
      expect(created.code, created.stderr).toBe(0);
      const key = created.stdout.trim();
      expect(key).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);

      const suffix = randomBytes(3).toString('hex');
      const names = [`Biscuit ${suffix}`, `Marmalade ${suffix}`];

      browser = await launch();
      const context = await browser.newContext();
      const page = await context.newPage();
      // Every request of the context (this page and anything it might open), before the first one.
      const requests: Request[] = [];
      context.on('request', (request) => requests.push(request));
      const errors = watchErrors(page);

      await page.goto(`${url}/docs`);
      // Swagger UI has rendered once the operation blocks are there.
      await page.locator('.opblock').first().waitFor();

      // The four operations, and no other.
      const opblocks = page.locator('.opblock[id^="operations-"]');
      const ids = await opblocks.evaluateAll((elements) => elements.map((element) => element.id));
      expect(ids.sort()).toEqual(operations.map(({ tag, operationId }) => `operations-${tag}-${operationId}`).sort());
      for (const { tag, operationId, summary } of operations) {
        const block = page.locator(`#operations-${tag}-${operationId}`);
        expect(await block.isVisible(), operationId).toBe(true);
        expect((await block.locator('.opblock-summary-operation-id').innerText()).trim()).toBe(operationId);
        expect((await block.locator('.opblock-summary-description').innerText()).trim()).toBe(summary);
      }

      // getPet is marked deprecated, and says until when once expanded.
      const getPet = page.locator('#operations-pets-getPet');
      expect((await getPet.getAttribute('class'))?.split(/\s+/)).toContain('opblock-deprecated');
      for (const { tag, operationId } of operations.filter(({ operationId }) => operationId !== 'getPet')) {
        expect((await page.locator(`#operations-${tag}-${operationId}`).getAttribute('class'))?.split(/\s+/), operationId).not.toContain('opblock-deprecated');
      }
      await getPet.locator('.opblock-summary-control').click();
      const description = getPet.locator('.opblock-description');
      await description.waitFor();
      expect(await description.innerText()).toContain('2030-12-05');
      expect((await getPet.locator('.opblock-body .opblock-title_normal').first().innerText()).trim()).toBe('Warning: Deprecated');
      await getPet.locator('.opblock-summary-control').click();

      // "Try it out" must call this instance: it is the first server, and the one selected.
      const servers = page.locator('select#servers');
      expect(await servers.locator('option').first().getAttribute('value')).toBe(`${url}/v1`);
      expect(await servers.inputValue()).toBe(`${url}/v1`);

      // Authorize with the key.
      await page.locator('.auth-wrapper button.btn.authorize').click();
      const modal = page.locator('.dialog-ux .modal-ux');
      await modal.waitFor();
      const bearerAuth = modal.locator('.auth-container').filter({ has: page.locator('h4 code', { hasText: /^bearerAuth$/ }) });
      await bearerAuth.locator('input').fill(key);
      await bearerAuth.locator('button.modal-btn.authorize').click();
      // Once applied, the form offers Logout instead.
      await bearerAuth.locator('button.modal-btn', { hasText: 'Logout' }).waitFor();
      await modal.locator('button.btn-done').click();
      await modal.waitFor({ state: 'detached' });
      expect((await page.locator('.auth-wrapper button.btn.authorize').getAttribute('class'))?.split(/\s+/)).toContain('locked');

      // As a person would click it: createPet twice with different bodies (both 201: no
      // Idempotency-Key is pre-filled, so the second is not a reuse of the first's key),
      // then getPet of the second, then listPets shows both.
      const execute = async (block: ReturnType<Page['locator']>, method: string, path: RegExp) => {
        const answered = page.waitForResponse((response) => response.request().method() === method && path.test(new URL(response.url()).pathname));
        await block.locator('button.execute').click();
        return answered;
      };
      const createPet = page.locator('#operations-pets-createPet');
      await createPet.locator('.opblock-summary-control').click();
      await createPet.locator('button.try-out__btn').click();
      const createdIds: number[] = [];
      for (const name of names) {
        await createPet.locator('textarea.body-param__text').fill(JSON.stringify({ name, categoryId: 1, status: 'available' }));
        const response = await execute(createPet, 'POST', /^\/v1\/pets$/);
        expect(response.status(), await response.text()).toBe(201);
        expect(await response.request().headerValue('idempotency-key')).toBeNull();
        createdIds.push(((await response.json()) as { id: number }).id);
      }
      expect(new Set(createdIds).size).toBe(2);

      const getPetBlock = page.locator('#operations-pets-getPet');
      await getPetBlock.locator('.opblock-summary-control').click();
      await getPetBlock.locator('button.try-out__btn').click();
      await getPetBlock.locator('tr[data-param-name="petId"] input').fill(String(createdIds[1]));
      const fetched = await execute(getPetBlock, 'GET', /^\/v1\/pets\/\d+$/);
      expect(fetched.status()).toBe(200);
      expect(await fetched.json()).toMatchObject({ id: createdIds[1], name: names[1] });

      // listPets: Try it out, Execute, and the live answer.
      const listPets = page.locator('#operations-pets-listPets');
      await listPets.locator('.opblock-summary-control').click();
      await listPets.locator('button.try-out__btn').click();
      const answered = page.waitForResponse((response) => response.url().startsWith(`${url}/v1/pets`) && response.request().method() === 'GET');
      await listPets.locator('button.execute').click();
      const apiResponse = await answered;
      expect(apiResponse.status()).toBe(200);
      expect(await apiResponse.request().headerValue('authorization')).toBe(`Bearer ${key}`);

      const live = listPets.locator('.live-responses-table tr.response');
      await live.first().waitFor();
      expect((await live.first().locator('.response-col_status').innerText()).trim()).toBe('200');
      const body = await live.first().locator('.response-col_description .highlight-code').first().innerText();
      for (const name of names) expect(body).toContain(name);
      expect((await listPets.locator('.request-url pre').innerText()).trim()).toMatch(new RegExp(`^${url.replace(/[.]/g, '\\.')}/v1/pets(\\?|$)`));

      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: path.join(artifacts, 'docs.png'), fullPage: true });

      // Only the service's own host:port was ever asked for anything: no CDN, no validator badge.
      const origin = new URL(url);
      const foreign = requests.map((request) => request.url()).filter((address) => {
        try {
          const parsed = new URL(address);
          return parsed.protocol !== origin.protocol || parsed.host !== origin.host;
        } catch {
          return true;
        }
      });
      expect(requests.length).toBeGreaterThan(0);
      expect(foreign).toEqual([]);
      expect(errors.pageErrors).toEqual([]);
      expect(errors.consoleErrors).toEqual([]);

      await browser.close();
      browser = undefined;
      const stopping = server;
      server = undefined;
      expect(await stopping.stop('SIGTERM'), stopping.output()).toBe(0);
    } finally {
      await browser?.close();
      await server?.stop('SIGKILL');
      await db.drop();
    }
    // Ample: 42 s measured on the shared 2-core machine with two benches running.
  }, 180_000);

  it('Redoc from `npm run docs`: renders every operation from file:// with the network cut off', async () => {
    const output = path.join(root, 'dist', 'docs', 'index.html');
    rmSync(output, { force: true });
    execFileSync('npm', ['run', '--silent', 'docs'], { cwd: root, stdio: 'pipe' });
    expect(existsSync(output)).toBe(true);

    const browser = await launch();
    try {
      // A tall window: the screenshot is of the window (Redoc 3 renders only the sections
      // near the one shown, so a full-page capture is mostly blank).
      const context = await browser.newContext({ viewport: { width: 1280, height: 1400 } });
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

      // The sidebar lists the operations under their tags; each one opens its section.
      const menuLink = (text: string) => page.locator('[data-component-name="Menu/MenuItem"] > a').filter({ has: page.locator(`span[data-text="${text}"]`) });
      // store first, so that the screenshot ends on pets (three operations, getPet deprecated).
      for (const tag of ['store', 'pets']) {
        await menuLink(tag).click();
        for (const { summary } of operations.filter((operation) => operation.tag === tag)) {
          const link = menuLink(summary);
          expect(await link.isVisible(), summary).toBe(true);
          await link.click();
          const heading = page.locator('[data-item-kind="httpItem"] h2').filter({ hasText: summary });
          await heading.waitFor();
          expect(await heading.isVisible(), summary).toBe(true);
          // The heading holds the summary, plus a "Deprecated" badge on getPet.
          expect((await heading.innerText()).split('\n')[0]?.trim()).toBe(summary);
        }
      }
      const getPet = page.locator('[data-item-kind="httpItem"] h2').filter({ hasText: 'Get an animal (deprecated)' });
      expect((await getPet.innerText()).split('\n').map((line) => line.trim())).toContain('Deprecated');

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
  }, 180_000);
});
