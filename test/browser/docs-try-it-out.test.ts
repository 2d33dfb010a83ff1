// Swagger UI at /docs in a real browser: Try it out with what a person might do beyond the
// happy path: a key that lacks a scope, and a request body editor emptied.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { browserRuns } from './browser.js';
import { authorize, INSUFFICIENT_SCOPE, SECRET, selectedBasePath, stop, tryItOut, withDocs, type ApiError, type ApiKeyWithSecret, type Order, type Pet } from './swagger-ui.js';

const runs = await browserRuns('test/browser/docs-try-it-out.test.ts');

describe.skipIf(!runs)('Swagger UI at /docs, Try it out, in Chromium', () => {
  afterAll(stop);

  // Least privilege as a person meets it: a key made through the API with pets:read alone,
  // given to Authorize. Try it out on createPet shows the 403 and the scope it lacks; listPets
  // works. The 403 is documented on the operation, as the page shows before anything is sent.
  it('Swagger UI at /docs: Authorize with a key holding pets:read alone (created through the API); Try it out on createPet shows 403 insufficient_scope naming pets:write, and listPets answers 200', async () => {
    await withDocs(async ({ url, key, page, errors }) => {
      const made = await fetch(`${url}/v1/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'read only', scopes: ['pets:read'] }),
      });
      const created = (await made.json()) as ApiKeyWithSecret;
      expect(made.status, JSON.stringify(created)).toBe(201);
      expect(created.scopes).toEqual(['pets:read']);
      expect(created.secret).toMatch(SECRET);

      await authorize(page, created.secret);
      const ui = tryItOut(page, await selectedBasePath(page));

      const createPet = await ui.open('createPet');
      const documented = createPet.locator('table.responses-table:not(.live-responses-table) tr.response[data-code="403"]');
      expect(await documented.locator('.response-col_description').innerText()).toContain('lacks the scope');
      const refused = await ui.execute<ApiError>('createPet', { body: JSON.stringify({ name: 'Refused', categoryId: 1, status: 'available' }) });
      expect(await refused.response.request().headerValue('authorization')).toBe(`Bearer ${created.secret}`);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'insufficient_scope', status: 403 });
      expect(refused.body.message).toContain('pets:write');
      // The header as sent (the page shows it with the spaces after its commas dropped).
      expect(await refused.response.headerValue('www-authenticate')).toBe(INSUFFICIENT_SCOPE('pets:write'));
      expect(refused.headers['www-authenticate']?.replace(/,\s*/g, ', ')).toBe(INSUFFICIENT_SCOPE('pets:write'));
      // What the person reads in the page: the status and the code, under "Server response".
      const live = createPet.locator('.live-responses-table tr.response');
      expect((await live.locator('.response-col_status').innerText()).trim()).toBe('403');
      expect(await live.locator('.response-col_description').innerText()).toContain('insufficient_scope');

      const listed = await ui.execute<Pet[]>('listPets');
      expect(listed.status).toBe(200);
      expect(await listed.response.request().headerValue('authorization')).toBe(`Bearer ${created.secret}`);
      // Nothing was created by the refused call.
      expect(listed.body.filter(({ name }) => name === 'Refused')).toEqual([]);

      expect(errors.pageErrors).toEqual([]);
      expect(errors.consoleErrors).toEqual([{ text: 'Failed to load resource: the server responded with a status of 403 (Forbidden)', url: `${url}/v1/pets` }]);
    });
  }, 600_000);

  // The contract: cancelOrder and completeOrder take "Nothing, or an empty JSON object". A
  // person who empties the body editor means "nothing"; Swagger UI then sends
  // `Content-Type: application/json` with `Content-Length: 0` (it always names the selected
  // media type of an operation that has a request body).
  it('Swagger UI at /docs: cancelOrder and completeOrder with the request body editor emptied (the contract\'s "Nothing") are 200, as with {}', async () => {
    await withDocs(async ({ url, key, page, errors }) => {
      await authorize(page, key);
      const ui = tryItOut(page, await selectedBasePath(page));
      const suffix = randomBytes(3).toString('hex');
      const orderIds: number[] = [];
      // The pets and their orders made over HTTP: only the emptied editor is this test's.
      const send = async <Body>(path: string, body: unknown): Promise<Body> => {
        const answer = await fetch(`${url}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect(answer.status, path).toBe(201);
        return (await answer.json()) as Body;
      };
      for (const name of [`Pickle ${suffix}`, `Crumpet ${suffix}`]) {
        const created = await send<Pet>('/pets', { name, categoryId: 1, status: 'available' });
        orderIds.push((await send<Order>('/store/orders', { petId: created.id })).id);
      }
      const [cancelId, completeId] = orderIds as [number, number];
      for (const [operationId, orderId, status] of [
        ['cancelOrder', cancelId, 'cancelled'],
        ['completeOrder', completeId, 'completed'],
      ] as const) {
        const shown = await ui.execute<Order>(operationId, { parameters: { orderId: String(orderId) }, body: '' });
        expect(await shown.response.request().headerValue('content-type')).toBe('application/json');
        // Soft: both operations are reported, whichever fails.
        expect.soft({ status: shown.status, body: shown.body }, `${operationId} with the body editor emptied answered ${JSON.stringify(shown.body)}`).toMatchObject({ status: 200, body: { id: orderId, status } });
      }
      expect(errors.pageErrors).toEqual([]);
      expect(errors.consoleErrors.filter((error) => error.url.startsWith(`${url}/v1/`))).toEqual([]);
    });
  }, 600_000);
});
