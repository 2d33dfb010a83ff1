// Swagger UI at /docs in a real browser (Debian's Chromium, driven by playwright-core),
// served by the running service, works from its own host alone. Screenshots go to artifacts/.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import openapi from '../../generated/openapi.js';
import { artifacts, browserRuns, operation, operations } from './browser.js';
import { authorize, selectedBasePath, stop, tryItOut, withDocs, STRONG_ETAG, type ApiError, type Order, type Pet } from './swagger-ui.js';

const runs = await browserRuns('test/browser/docs.test.ts');

/** A Pet as the service answers it: the times are the service's own (read-only). */
type TimedPet = Pet & { createdAt: string; updatedAt: string };

describe.skipIf(!runs)('Swagger UI at /docs, in Chromium', () => {
  afterAll(stop);

  // The three cases share one page, in this order (a load of Swagger UI is the costly part):
  // the first screen as it opens, the Webhooks section, then Authorize and Try it out.
  it('Swagger UI at /docs: the operations start on the first screen (1280 × 800); the conventions fold under "Conventions" and open on a click', async () => {
    await withDocs(async ({ page, errors }) => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.mouse.wheel(0, -10_000);
      const first = await page.locator('.opblock[id^="operations-"]').first().boundingBox();
      await page.screenshot({ path: path.join(artifacts, 'docs-first-screen.png') });
      // The first operation's whole header row is on the first screen.
      expect(first).not.toBeNull();
      expect((first?.y ?? Infinity) + 40).toBeLessThan(800);
      const conventions = page.locator('.information-container details');
      expect(await conventions.count()).toBe(1);
      expect(await conventions.locator('summary').innerText()).toMatch(/^Conventions: authentication, errors, numbers/);
      expect(await conventions.getAttribute('open')).toBeNull();
      await conventions.locator('summary').click();
      await conventions.locator('h2', { hasText: 'Numbers' }).waitFor();
      expect(await conventions.innerText()).toContain('9007199254740991');
      expect(errors.pageErrors).toEqual([]);
    }, { keep: true });
  }, 600_000);

  // OpenAPI 3.1's top-level webhooks, as Swagger UI 5 shows them: a "Webhooks" section after
  // the operations, one POST block per event type (its path the type), each with the Standard
  // Webhooks headers and its payload's schema, and no "Try it out" (the service sends these
  // requests; nobody sends them to it).
  it('Swagger UI at /docs: the Webhooks section shows every event type of the contract, in its order, with the signature headers and the payload', async () => {
    await withDocs(async ({ page, errors }) => {
      const webhooks = page.locator('.webhooks');
      await webhooks.waitFor();
      expect((await webhooks.locator('h2').first().innerText()).trim()).toBe('Webhooks');
      const eventTypes = Object.keys(openapi.webhooks as Record<string, unknown>);
      expect(eventTypes).toHaveLength(10);
      const blocks = webhooks.locator('.opblock');
      expect(await blocks.locator('.opblock-summary-path').allInnerTexts()).toEqual(eventTypes);
      expect((await blocks.locator('.opblock-summary-method').allInnerTexts()).map((m) => m.trim())).toEqual(eventTypes.map(() => 'POST'));
      // Expanded, order.completed shows the three headers, the OrderEvent payload, and no Try it out.
      const completed = blocks.filter({ has: page.locator('.opblock-summary-path', { hasText: /^order\.completed$/ }) });
      await completed.locator('.opblock-summary-control').click();
      for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) await completed.locator(`tr[data-param-name="${header}"]`).waitFor();
      expect(await completed.locator('.opblock-description').innerText()).toContain('An order was completed');
      const body = completed.locator('.opblock-section-request-body');
      await body.waitFor();
      expect(await body.innerText()).toMatch(/"type": "order\.completed"/);
      expect(await completed.locator('button.try-out__btn').count()).toBe(0);
      await page.screenshot({ path: path.join(artifacts, 'docs-webhooks.png'), fullPage: true });
      expect(errors.pageErrors).toEqual([]);
      expect(errors.consoleErrors).toEqual([]);
    }, { keep: true });
  }, 600_000);

  // What only a browser shows: the page and its blocks, Authorize, and Try it out on a write,
  // a read and a refusal. Every operation's behaviour over HTTP is test/e2e/client.test.ts's.
  it(`Swagger UI at /docs: the contract's ${operations.length} operations, the deprecated marked, this server first, Authorize, then Try it out: a pet created (201), listed by the id filter's array field (200), ordered (201), refused a second order (409, the Error body shown), renamed by merge patch with the page's own media type and example (200)`, async () => {
    await withDocs(async ({ url, key, page, requests, errors }) => {
      const suffix = randomBytes(3).toString('hex');
      const names = [`Biscuit ${suffix}`, `Marmalade ${suffix}`, `Crumble ${suffix}`] as const;

      // The page is the API's: its title in the tab and at the top, its own icon, and no top
      // bar (which held Fastify's logo and an "Explore" box showing /docs/json).
      expect(await page.title()).toBe(openapi.info.title);
      expect(await page.locator('.info h1.title').innerText()).toContain(openapi.info.title);
      expect(await page.locator('.topbar').count()).toBe(0);
      expect(await page.locator('input.download-url-input').count()).toBe(0);
      expect(await page.locator('link[rel="icon"]').evaluateAll((links) => links.map((link) => link.getAttribute('href')))).toEqual(['/docs/static/theme/favicon.svg']);

      // The contract's operations, and no other, each with its summary (the webhooks, in their
      // own section, are checked by the next test).
      // Read in one pass over the page (a round trip to the browser per block and field cost
      // seconds); each block marked deprecated exactly when the contract says so.
      const shown = await page.locator('.opblock[id^="operations-"]').evaluateAll((elements) => {
        const shownText = (found: (typeof elements)[number] | null) => (found && 'innerText' in found ? found.innerText.trim() : undefined);
        return elements
          .filter((element) => !element.closest('.webhooks'))
          .map((element) => ({
            id: element.id,
            // What a person sees: rendered (not hidden by visibility or size), and the text as shown.
            visible: element.checkVisibility({ visibilityProperty: true }) && element.getClientRects().length > 0,
            operationId: shownText(element.querySelector<typeof element>('.opblock-summary-operation-id')),
            summary: shownText(element.querySelector<typeof element>('.opblock-summary-description')),
            deprecated: element.classList.contains('opblock-deprecated'),
          }))
          .sort((a, b) => a.id.localeCompare(b.id));
      });
      const expected = operations
        .map(({ tag, operationId, summary, deprecated }) => ({ id: `operations-${tag}-${operationId}`, visible: true, operationId, summary, deprecated }))
        .sort((a, b) => a.id.localeCompare(b.id));
      expect(shown).toEqual(expected);

      // getPet is deprecated, and says until when once expanded.
      expect(operation('getPet').deprecated).toBe(true);
      const getPet = page.locator(`#operations-${operation('getPet').tag}-getPet`);
      await getPet.locator('.opblock-summary-control').click();
      const description = getPet.locator('.opblock-description');
      await description.waitFor();
      expect(await description.innerText()).toContain('2030-12-05');
      expect((await getPet.locator('.opblock-body .opblock-title_normal').first().innerText()).trim()).toBe('Warning: Deprecated');
      await getPet.locator('.opblock-summary-control').click();
      await description.waitFor({ state: 'detached' });

      // "Try it out" must call this instance: it is the first server, and the one selected.
      const servers = page.locator('select#servers');
      expect(await servers.locator('option').first().getAttribute('value')).toBe(`${url}/v1`);
      expect(await servers.inputValue()).toBe(`${url}/v1`);

      await authorize(page, key);

      const ui = tryItOut(page, await selectedBasePath(page));

      // A write: createPet, an available pet (201), the key sent as a bearer token.
      const created = await ui.execute<Pet>('createPet', { body: JSON.stringify({ name: names[0], categoryId: 1, status: 'available' }) });
      expect(created.status).toBe(201);
      expect(await created.response.request().headerValue('authorization')).toBe(`Bearer ${key}`);
      expect(created.body).toMatchObject({ name: names[0], categoryId: 1, status: 'available' });
      const petId = created.body.id;

      // A read: listPets with the id filter, one item added to the array field, the pet's id typed in.
      const listPets = await ui.open('listPets');
      const idField = listPets.locator('tr[data-param-name="id"]');
      expect(await idField.locator('.json-schema-form-item input').count()).toBe(0);
      await idField.locator('button.json-schema-form-item-add').click();
      await idField.locator('.json-schema-form-item input').fill(String(petId));
      const filtered = await ui.execute<Pet[]>('listPets');
      expect(filtered.status).toBe(200);
      expect(new URL(filtered.response.url()).searchParams.getAll('id')).toEqual([String(petId)]);
      expect(filtered.body).toEqual([created.body]);
      // The form sends limit's default as a value of its own; orderBy has none (relevance with q, id without).
      expect((await listPets.locator('.request-url pre').innerText()).trim()).toBe(`${url}/v1/pets?limit=20&id=${petId}`);

      // placeOrder: the editor holds the contract's example; the person puts the pet's id in
      // its place (201). The same again: 409, the Error body shown, naming the pet.
      const placeOrder = await ui.open('placeOrder');
      expect(await placeOrder.locator('textarea.body-param__text').inputValue()).toMatch(/"petId"/);
      const placed = await ui.execute<Order>('placeOrder', { body: JSON.stringify({ petId }) });
      expect(placed.status).toBe(201);
      expect(placed.body).toMatchObject({ petId, status: 'placed' });
      const refused = await ui.execute<ApiError>('placeOrder');
      expect(refused.status).toBe(409);
      expect(Object.keys(refused.body).sort()).toEqual(['code', 'message', 'status']);
      expect(refused.body).toMatchObject({ code: 'pet_not_available', status: 409 });
      expect(refused.body.message).toContain(String(petId));

      // updatePet as the page opens it: its body's media type is the contract's first,
      // application/merge-patch+json (application/json is offered too), the editor holds the
      // contract's example, If-Match is empty. Another pet's id typed: 200, renamed.
      const draft = await ui.execute<TimedPet>('createPet', { body: JSON.stringify({ name: names[1], categoryId: 3 }) });
      expect(draft.status).toBe(201);
      expect(draft.headers.etag).toMatch(STRONG_ETAG);
      const updatePet = await ui.open('updatePet');
      const mediaType = updatePet.locator('.body-param-content-type select');
      expect(await mediaType.inputValue()).toBe('application/merge-patch+json');
      expect(await mediaType.locator('option').allInnerTexts()).toEqual(['application/merge-patch+json', 'application/json']);
      expect(JSON.parse(await updatePet.locator('textarea.body-param__text').inputValue())).toEqual({ name: 'Rex' });
      expect(await updatePet.locator('tr[data-param-name="If-Match"] input').inputValue()).toBe('');
      const renamed = await ui.execute<TimedPet>('updatePet', { parameters: { petId: String(draft.body.id) } });
      expect(renamed.status).toBe(200);
      expect(await renamed.response.request().headerValue('content-type')).toBe('application/merge-patch+json');
      expect(JSON.parse(renamed.response.request().postData() ?? '')).toEqual({ name: 'Rex' });
      // Renamed: a change, so updatedAt moves past the draft's; createdAt stays.
      expect(renamed.body).toEqual({ ...draft.body, name: 'Rex', updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) });
      expect(renamed.body.updatedAt > draft.body.updatedAt, `updatedAt ${renamed.body.updatedAt} after ${draft.body.updatedAt}`).toBe(true);
      expect(renamed.headers.etag).toMatch(STRONG_ETAG);
      expect(renamed.headers.etag).not.toBe(draft.headers.etag);

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
      // Chromium logs every 4xx answer as a console error: the refusal above, and nothing else.
      const refusal = (status: string, path: string) => ({ text: `Failed to load resource: the server responded with a status of ${status}`, url: `${url}/v1${path}` });
      expect(errors.consoleErrors).toEqual([refusal('409 (Conflict)', '/store/orders')]);
    }, { keep: true });
  }, 600_000);
});
