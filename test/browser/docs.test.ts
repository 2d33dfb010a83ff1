// The documentation in a real browser (Debian's Chromium, driven by playwright-core):
// Swagger UI at /docs, served by the running service, works end to end from its own host
// alone; the Redoc page from `npm run docs` renders from file:// with the network cut off.
// Screenshots go to artifacts/ (git-ignored) for a human to look at.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Locator, type Page, type Request, type Response } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import openapi from '../../generated/openapi.js';
import { createTestDatabase, storedPet } from '../helper.js';
import { apikey, root, startServer } from '../process.js';
import { CHROMIUM, requires } from '../support/requires.js';

const haveChromium = existsSync(CHROMIUM);
const runs = await requires('chromium', 'test/browser/docs.test.ts (the /docs pages in a browser)');
const artifacts = path.join(root, 'artifacts');

// The operations of the contract, as both pages show them: Swagger UI names a block
// `operations-{first tag}-{operationId}` and shows the summary; Redoc lists the summary
// under the tag. Read from the contract, so that a new operation is looked for at once.
interface ContractOperation {
  operationId: string;
  tag: string;
  summary: string;
  /** Upper case: `POST`. */
  method: string;
  /** Under the base path: `/store/orders/{orderId}`. */
  path: string;
  deprecated: boolean;
}
const httpMethods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
const operations: ContractOperation[] = Object.entries(openapi.paths as Record<string, Partial<Record<string, { operationId?: string; tags?: string[]; summary?: string; deprecated?: boolean }>>>).flatMap(([path, item]) =>
  httpMethods.flatMap((method) => {
    const operation = item[method];
    if (!operation) return [];
    const { operationId, tags, summary } = operation;
    if (!operationId || !tags?.[0] || !summary) throw new Error(`${method.toUpperCase()} ${path} has no operationId, tag or summary in the contract: both pages show them`);
    return [{ operationId, tag: tags[0], summary, method: method.toUpperCase(), path, deprecated: operation.deprecated === true }];
  }),
);
function operation(operationId: string): ContractOperation {
  const found = operations.find((candidate) => candidate.operationId === operationId);
  if (!found) throw new Error(`The contract has no operation ${operationId}`);
  return found;
}

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

interface Docs {
  /** The service, `http://127.0.0.1:port`. */
  url: string;
  /** An API key, created before the service started. */
  key: string;
  page: Page;
  /** Every request of the browser context, from the first. */
  requests: Request[];
  errors: ReturnType<typeof watchErrors>;
}

/**
 * A fresh database with one API key, the service on it, and Chromium showing its /docs page
 * (rendered). Afterwards the service must stop cleanly on SIGTERM.
 */
async function withDocs(run: (docs: Docs) => Promise<void>): Promise<void> {
  const db = await createTestDatabase();
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let browser: Browser | undefined;
  try {
    // The key exists before the service starts, so its cache has it from the first request.
    const created = await apikey(['create', 'browser'], db.url);
    // WEBHOOK_ALLOW_PRIVATE: the webhook endpoint tried out points at 127.0.0.1 (nothing is
    // delivered to it while the page is read: port 9, and the endpoint is disabled at once).
    server = await startServer({ DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE: 'true' });
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);

    browser = await launch();
    const context = await browser.newContext();
    // Waits are on the page's state, never on time; on a busy 2-core machine a render or an
    // answer can take many seconds, so each wait may take a minute.
    context.setDefaultTimeout(60_000);
    const page = await context.newPage();
    // Every request of the context (this page and anything it might open), before the first one.
    const requests: Request[] = [];
    context.on('request', (request) => requests.push(request));
    const errors = watchErrors(page);

    await page.goto(`${server.url}/docs`);
    // Swagger UI has rendered once the operation blocks are there.
    await page.locator('.opblock').first().waitFor();
    await run({ url: server.url, key, page, requests, errors });

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
}

/** The selected server's base path (`/v1`): "Try it out" calls it. */
async function selectedBasePath(page: Page): Promise<string> {
  return new URL(await page.locator('select#servers').inputValue()).pathname.replace(/\/$/, '');
}

/** Authorize with the key, as a person does: the dialog, the bearerAuth field, Authorize, Close. */
async function authorize(page: Page, key: string): Promise<void> {
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
}

/** What Swagger UI shows under "Server response" after Execute, and the exchange behind it. */
interface Shown<Body = unknown> {
  /** The status shown. */
  status: number;
  /** The response body shown, parsed; undefined for an answer without one (204, 304). */
  body: Body;
  /** The response headers shown, by lower-case name. */
  headers: Record<string, string>;
  response: Response;
}

/** Statuses whose answer has no body: the page shows none. */
const WITHOUT_BODY = new Set([204, 304]);

/**
 * "Try it out" on Swagger UI's blocks, as a person clicks it: expand the operation, "Try it
 * out", type into the fields, Execute, read the answer the page shows. Every operation
 * executed is written down.
 */
function tryItOut(page: Page, basePath: string) {
  const opened = new Set<string>();
  const executed = new Set<string>();
  const block = (operationId: string) => {
    const { tag } = operation(operationId);
    return page.locator(`#operations-${tag}-${operationId}`);
  };

  /** The operation's block, expanded and in "Try it out" mode (once: it stays so). */
  async function open(operationId: string): Promise<Locator> {
    const opblock = block(operationId);
    if (!opened.has(operationId)) {
      await opblock.locator('.opblock-summary-control').click();
      await opblock.locator('button.try-out__btn').click();
      await opblock.locator('button.execute').waitFor();
      opened.add(operationId);
    }
    return opblock;
  }

  /**
   * Types `parameters` into their fields and `body` (when given) into the request body
   * editor, leaves every other field as the page has it, clicks Execute and returns what the
   * page shows. The shown status and body must be those of the exchange.
   */
  async function execute<Body = unknown>(operationId: string, { parameters = {}, body }: { parameters?: Record<string, string>; body?: string } = {}): Promise<Shown<Body>> {
    const { method, path: template } = operation(operationId);
    const opblock = await open(operationId);
    for (const [name, value] of Object.entries(parameters)) await opblock.locator(`tr[data-param-name="${name}"] input`).fill(value);
    if (body !== undefined) await opblock.locator('textarea.body-param__text').fill(body);
    // The person types no Idempotency-Key, and the page must not fill one in.
    const idempotencyKey = opblock.locator('tr[data-param-name="Idempotency-Key"] input');
    if ((await idempotencyKey.count()) > 0) expect(await idempotencyKey.inputValue(), `${operationId}: Idempotency-Key field`).toBe('');
    // A block executed before shows its last answer until the next one replaces it: Clear
    // it first, so that the answer read below is this request's.
    const clear = opblock.locator('button.btn-clear');
    if ((await clear.count()) > 0) {
      await clear.click();
      await opblock.locator('.live-responses-table').waitFor({ state: 'detached' });
    }
    const pathname = new RegExp(`^${(basePath + template).split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);
    const answered = page.waitForResponse((response) => response.request().method() === method && pathname.test(new URL(response.url()).pathname));
    await opblock.locator('button.execute').click();
    const response = await answered;
    const live = opblock.locator('.live-responses-table tr.response');
    await live.waitFor();
    const status = Number((await live.locator('.response-col_status').innerText()).trim());
    expect(status, `${operationId}: the status shown`).toBe(response.status());
    let shown: Body;
    if (WITHOUT_BODY.has(status)) {
      expect(await live.locator('.response-col_description .highlight-code').count(), `${operationId}: no body shown for ${status}`).toBe(0);
      shown = undefined as Body;
    } else {
      const text = await live.locator('.response-col_description .highlight-code code').first().innerText();
      shown = JSON.parse(text) as Body;
      expect(shown, `${operationId}: the body shown`).toEqual(await response.json());
    }
    // Each header line reads " name: value ".
    const lines = await live.locator('.response-col_description .headerline').allInnerTexts();
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    expect(await response.request().headerValue('idempotency-key'), `${operationId}: Idempotency-Key sent`).toBeNull();
    executed.add(operationId);
    return { status, body: shown, headers, response };
  }

  return { open, execute, executed };
}

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}
interface Order {
  id: number;
  petId: number;
  status: string;
}
interface Category {
  id: number;
  name: string;
}
interface ApiError {
  code: string;
  message: string;
  status: number;
}
interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  revokedAt?: string;
  previousSecretExpiresAt?: string;
}
type ApiKeyWithSecret = ApiKey & { secret: string };
interface Event {
  id: number;
  type: string;
  createdAt: string;
  data: unknown;
}
interface WebhookEndpoint {
  id: number;
  url: string;
  eventTypes: string[];
  description?: string;
  enabled: boolean;
  disabledAt?: string;
  disabledReason?: string;
  createdAt: string;
}
type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };
const WHSEC = /^whsec_[A-Za-z0-9+/]{32}$/;
const SECRET = /^ask_[A-Za-z0-9_-]{43}$/;
const INSUFFICIENT_SCOPE = (scope: string) => `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`;
/** A strong entity tag, as the contract's ETag header. */
const STRONG_ETAG = /^"[A-Za-z0-9_-]{1,62}"$/;

describe.skipIf(!runs)('the documentation in Chromium', () => {
  beforeAll(() => {
    // Only reached without Chromium when CI=true: CI installs it, so its absence is a broken machine.
    if (!haveChromium) throw new Error(`Chromium is missing at ${CHROMIUM}, and CI=true: CI must install it (apt-get install chromium). Outside CI this suite is skipped (test/support/requires.ts).`);
    mkdirSync(artifacts, { recursive: true });
  });

  it(`Swagger UI at /docs: the contract's ${operations.length} operations, the deprecated marked, this server first, Authorize, then Try it out on every operation as a person would: a pet ordered, looked up, sold; a second order refused (409); a second pet ordered and cancelled; both orders listed; the inventory; a draft listed by category, changed by merge patch (the page's own media type and example, then application/json), guarded by If-Match (412), refused while ordered (409), not modified (304), removed (204); categories named, refused a taken name (409), listed, removed; an API key created (its secret shown once), listed, read, rotated, revoked, then refused a rotation (409)`, async () => {
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
      const opblocks = page.locator('.opblock[id^="operations-"]');
      const ids = await opblocks.evaluateAll((elements) => elements.filter((element) => !element.closest('.webhooks')).map((element) => element.id));
      expect(ids.sort()).toEqual(operations.map(({ tag, operationId }) => `operations-${tag}-${operationId}`).sort());
      for (const { tag, operationId, summary, deprecated } of operations) {
        const block = page.locator(`#operations-${tag}-${operationId}`);
        expect(await block.isVisible(), operationId).toBe(true);
        expect((await block.locator('.opblock-summary-operation-id').innerText()).trim()).toBe(operationId);
        expect((await block.locator('.opblock-summary-description').innerText()).trim()).toBe(summary);
        // Marked deprecated exactly when the contract says so.
        const classes = (await block.getAttribute('class'))?.split(/\s+/);
        if (deprecated) expect(classes, operationId).toContain('opblock-deprecated');
        else expect(classes, operationId).not.toContain('opblock-deprecated');
      }

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

      // Try it out, as a person would click it, on every operation.
      const ui = tryItOut(page, await selectedBasePath(page));

      // createPet: an available pet (201).
      const created = await ui.execute<Pet>('createPet', { body: JSON.stringify({ name: names[0], categoryId: 1, status: 'available' }) });
      expect(created.status).toBe(201);
      expect(await created.response.request().headerValue('authorization')).toBe(`Bearer ${key}`);
      expect(created.body).toMatchObject({ name: names[0], categoryId: 1, status: 'available' });
      const petId = created.body.id;

      // placeOrder: the body editor holds the contract's example; the person puts the pet's id
      // in its place. 201, and the order's id is read from the body shown.
      const placeOrder = await ui.open('placeOrder');
      expect(await placeOrder.locator('textarea.body-param__text').inputValue()).toMatch(/"petId"/);
      const placed = await ui.execute<Order>('placeOrder', { body: JSON.stringify({ petId }) });
      expect(placed.status).toBe(201);
      expect(placed.body).toMatchObject({ petId, status: 'placed' });
      const orderId = placed.body.id;

      // getOrder of that id: placed.
      const fetched = await ui.execute<Order>('getOrder', { parameters: { orderId: String(orderId) } });
      expect(fetched.status).toBe(200);
      expect(fetched.body).toMatchObject({ id: orderId, petId, status: 'placed' });

      // listPets as the page opens it sends no filter (the contract gives the id filter no
      // example to pre-fill) and lists the pet, pending.
      const listed = await ui.execute<Pet[]>('listPets');
      expect(listed.status).toBe(200);
      expect(new URL(listed.response.url()).searchParams.has('id'), listed.response.url()).toBe(false);
      expect(listed.body).toContainEqual(storedPet({ id: petId, name: names[0], categoryId: 1, status: 'pending' }));
      // Then with the id filter: one item added to the array field, the pet's id typed in.
      const listPets = await ui.open('listPets');
      const idField = listPets.locator('tr[data-param-name="id"]');
      expect(await idField.locator('.json-schema-form-item input').count()).toBe(0);
      await idField.locator('button.json-schema-form-item-add').click();
      await idField.locator('.json-schema-form-item input').fill(String(petId));
      const filtered = await ui.execute<Pet[]>('listPets');
      expect(filtered.status).toBe(200);
      expect(new URL(filtered.response.url()).searchParams.getAll('id')).toEqual([String(petId)]);
      expect(filtered.body).toEqual([storedPet({ id: petId, name: names[0], categoryId: 1, status: 'pending' })]);
      expect((await listPets.locator('.request-url pre').innerText()).trim()).toBe(`${url}/v1/pets?limit=20&id=${petId}`);

      // completeOrder, its optional body as the page fills it ({}): 200, completed.
      const completeOrder = await ui.open('completeOrder');
      expect(JSON.parse(await completeOrder.locator('textarea.body-param__text').inputValue())).toEqual({});
      const completed = await ui.execute<Order>('completeOrder', { parameters: { orderId: String(orderId) } });
      expect(completed.status).toBe(200);
      expect(completed.body).toMatchObject({ id: orderId, petId, status: 'completed' });

      // placeOrder again for the same pet, the editor as the person left it: 409, the pet
      // is sold.
      expect(JSON.parse(await placeOrder.locator('textarea.body-param__text').inputValue())).toEqual({ petId });
      const refused = await ui.execute<{ code: string; message: string; status: number }>('placeOrder');
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'pet_not_available', status: 409 });
      expect(refused.body.message).toContain(String(petId));

      // A second pet (getPet of it, deprecated but working), ordered, then cancelled with
      // the optional body as the page fills it ({}): 200, cancelled.
      const second = await ui.execute<Pet>('createPet', { body: JSON.stringify({ name: names[1], categoryId: 2, status: 'available' }) });
      expect(second.status).toBe(201);
      const secondId = second.body.id;
      expect(secondId).not.toBe(petId);
      const got = await ui.execute<Pet>('getPet', { parameters: { petId: String(secondId) } });
      expect(got.status).toBe(200);
      expect(got.body).toEqual(storedPet({ id: secondId, name: names[1], categoryId: 2, status: 'available' }));
      const placedSecond = await ui.execute<Order>('placeOrder', { body: JSON.stringify({ petId: secondId }) });
      expect(placedSecond.status).toBe(201);
      const secondOrderId = placedSecond.body.id;
      const cancelOrder = await ui.open('cancelOrder');
      expect(JSON.parse(await cancelOrder.locator('textarea.body-param__text').inputValue())).toEqual({});
      const cancelled = await ui.execute<Order>('cancelOrder', { parameters: { orderId: String(secondOrderId) } });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ id: secondOrderId, petId: secondId, status: 'cancelled' });

      // listOrders: both orders, and no other (the refused one was never stored).
      const orders = await ui.execute<Order[]>('listOrders');
      expect(orders.status).toBe(200);
      expect(orders.body.map(({ id, petId: pet, status }) => ({ id, petId: pet, status }))).toEqual([
        { id: orderId, petId, status: 'completed' },
        { id: secondOrderId, petId: secondId, status: 'cancelled' },
      ]);

      // getInventory: the first pet sold, the second available again (the database is this
      // test's alone).
      const inventory = await ui.execute('getInventory');
      expect(inventory.status).toBe(200);
      expect(inventory.body).toEqual({ available: 1, pending: 0, sold: 1, noStatus: 0 });

      // Contract 1.3.0. A draft: no status, category 3; its ETag is among the headers shown.
      const draft = await ui.execute<Pet>('createPet', { body: JSON.stringify({ name: names[2], categoryId: 3 }) });
      expect(draft.status).toBe(201);
      const draftId = draft.body.id;
      expect(draft.body).toEqual(storedPet({ id: draftId, name: names[2], categoryId: 3 }));
      expect(draft.headers.etag).toMatch(STRONG_ETAG);
      expect(draft.headers.etag).toBe(await draft.response.headerValue('etag'));

      // listPets: the categoryId filter is empty until typed into; with it and the id filter
      // (its one item now holding the draft's id) the draft is listed, and with a status not.
      expect(await listPets.locator('tr[data-param-name="categoryId"] input').inputValue()).toBe('');
      await idField.locator('.json-schema-form-item input').fill(String(draftId));
      const ofCategory = await ui.execute<Pet[]>('listPets', { parameters: { categoryId: '3' } });
      expect(ofCategory.status).toBe(200);
      expect(ofCategory.body).toEqual([draft.body]);
      expect((await listPets.locator('.request-url pre').innerText()).trim()).toBe(`${url}/v1/pets?limit=20&id=${draftId}&categoryId=3`);
      expect((await ui.execute<Pet[]>('listPets', { parameters: { categoryId: '1' } })).body).toEqual([]);
      const statusField = listPets.locator('tr[data-param-name="status"] select');
      await statusField.selectOption('available');
      expect((await ui.execute<Pet[]>('listPets', { parameters: { categoryId: '3' } })).body).toEqual([]);

      // updatePet as the page opens it: its body's media type is the contract's first,
      // application/merge-patch+json (application/json is offered too), the editor holds the
      // contract's example, If-Match is empty. Only the pet's id is typed: 200, renamed.
      const updatePet = await ui.open('updatePet');
      const mediaType = updatePet.locator('.body-param-content-type select');
      expect(await mediaType.inputValue()).toBe('application/merge-patch+json');
      expect(await mediaType.locator('option').allInnerTexts()).toEqual(['application/merge-patch+json', 'application/json']);
      expect(JSON.parse(await updatePet.locator('textarea.body-param__text').inputValue())).toEqual({ name: 'Rex' });
      const ifMatch = updatePet.locator('tr[data-param-name="If-Match"] input');
      expect(await ifMatch.inputValue()).toBe('');
      const renamed = await ui.execute<Pet>('updatePet', { parameters: { petId: String(draftId) } });
      expect(renamed.status).toBe(200);
      expect(await renamed.response.request().headerValue('content-type')).toBe('application/merge-patch+json');
      expect(JSON.parse(renamed.response.request().postData() ?? '')).toEqual({ name: 'Rex' });
      expect(renamed.response.request().headers()['if-match']).toBeUndefined();
      expect(renamed.body).toEqual(storedPet({ id: draftId, name: 'Rex', categoryId: 3 }));
      expect(renamed.headers.etag).toMatch(STRONG_ETAG);
      expect(renamed.headers.etag).not.toBe(draft.headers.etag);
      // Offered, with If-Match: the draft's ETag is stale now (412, nothing changed), the
      // rename's matches (200).
      const offer = JSON.stringify({ status: 'available' });
      const stale = await ui.execute<ApiError>('updatePet', { parameters: { petId: String(draftId), 'If-Match': draft.headers.etag ?? '' }, body: offer });
      expect(stale.status).toBe(412);
      expect(stale.body).toMatchObject({ code: 'precondition_failed', status: 412 });
      const offered = await ui.execute<Pet>('updatePet', { parameters: { 'If-Match': renamed.headers.etag ?? '' } });
      expect(await offered.response.request().headerValue('if-match')).toBe(renamed.headers.etag);
      expect(offered.status).toBe(200);
      expect(offered.body).toEqual(storedPet({ id: draftId, name: 'Rex', categoryId: 3, status: 'available' }));
      // The other media type, application/json, chosen in the page: read the same way.
      await mediaType.selectOption('application/json');
      const named = await ui.execute<Pet>('updatePet', { parameters: { 'If-Match': offered.headers.etag ?? '' }, body: JSON.stringify({ name: names[2] }) });
      expect(await named.response.request().headerValue('content-type')).toBe('application/json');
      expect(named.status).toBe(200);
      expect(named.body).toEqual(storedPet({ id: draftId, name: names[2], categoryId: 3, status: 'available' }));
      await mediaType.selectOption('application/merge-patch+json');
      const offeredDraft = await ui.execute<Pet[]>('listPets', { parameters: { categoryId: '3' } });
      expect(offeredDraft.body).toEqual([named.body]);
      await statusField.selectOption('');

      // Ordered: taking its status away is refused while the order holds it (409).
      const draftOrder = await ui.execute<Order>('placeOrder', { body: JSON.stringify({ petId: draftId }) });
      expect(draftOrder.status).toBe(201);
      const reserved = await ui.execute<ApiError>('updatePet', { parameters: { 'If-Match': '' }, body: JSON.stringify({ status: null }) });
      expect(await reserved.response.request().headerValue('content-type')).toBe('application/merge-patch+json');
      expect(JSON.parse(reserved.response.request().postData() ?? '')).toEqual({ status: null });
      expect(reserved.status).toBe(409);
      expect(reserved.body).toMatchObject({ code: 'pet_reserved', status: 409 });
      expect(reserved.body.message).toContain(String(draftOrder.body.id));

      // getPet: its ETag; with If-None-Match naming it, 304 and no body. If-None-Match starts empty.
      const getPetBlock = await ui.open('getPet');
      const ifNoneMatch = getPetBlock.locator('tr[data-param-name="If-None-Match"] input');
      expect(await ifNoneMatch.inputValue()).toBe('');
      const pending = await ui.execute<Pet>('getPet', { parameters: { petId: String(draftId) } });
      expect(pending.status).toBe(200);
      expect(pending.body).toEqual(storedPet({ id: draftId, name: names[2], categoryId: 3, status: 'pending' }));
      expect(pending.headers.etag).toMatch(STRONG_ETAG);
      const notModified = await ui.execute('getPet', { parameters: { 'If-None-Match': pending.headers.etag ?? '' } });
      expect(notModified.status).toBe(304);
      expect(notModified.body).toBeUndefined();
      await ifNoneMatch.fill('');

      // The order cancelled, the draft is removed: If-Match starts empty; the pending pet's
      // ETag is stale (412); without If-Match, 204 and no body; then it is listed nowhere.
      expect((await ui.execute<Order>('cancelOrder', { parameters: { orderId: String(draftOrder.body.id) } })).status).toBe(200);
      const deletePet = await ui.open('deletePet');
      expect(await deletePet.locator('tr[data-param-name="If-Match"] input').inputValue()).toBe('');
      const staleRemoval = await ui.execute<ApiError>('deletePet', { parameters: { petId: String(draftId), 'If-Match': pending.headers.etag ?? '' } });
      expect(staleRemoval.status).toBe(412);
      expect(staleRemoval.body).toMatchObject({ code: 'precondition_failed', status: 412 });
      const removed = await ui.execute('deletePet', { parameters: { 'If-Match': '' } });
      expect(removed.status).toBe(204);
      expect(removed.body).toBeUndefined();
      expect((await ui.execute<Pet[]>('listPets', { parameters: { categoryId: '3' } })).body).toEqual([]);

      // putCategory as the page opens it (the editor holds the contract's example, Dogs): the
      // id typed, 201; the same again, 200; the name in other letters for another id, 409.
      const putCategory = await ui.open('putCategory');
      expect(JSON.parse(await putCategory.locator('textarea.body-param__text').inputValue())).toEqual({ name: 'Dogs' });
      const dogs = await ui.execute<Category>('putCategory', { parameters: { categoryId: '7' } });
      expect(dogs.status).toBe(201);
      expect(await dogs.response.request().headerValue('content-type')).toBe('application/json');
      expect(dogs.body).toEqual({ id: 7, name: 'Dogs' });
      expect(dogs.headers.location).toBe('/v1/categories/7');
      expect((await ui.execute<Category>('putCategory')).status).toBe(200);
      const taken = await ui.execute<ApiError>('putCategory', { parameters: { categoryId: '8' }, body: JSON.stringify({ name: 'dogs' }) });
      expect(taken.status).toBe(409);
      expect(taken.body).toMatchObject({ code: 'category_name_taken', status: 409 });
      expect((await ui.execute<Category>('putCategory', { body: JSON.stringify({ name: 'Cats' }) })).status).toBe(201);

      // getCategory, listCategories (a page of one names the next), deleteCategory (204).
      const got7 = await ui.execute<Category>('getCategory', { parameters: { categoryId: '7' } });
      expect(got7.status).toBe(200);
      expect(got7.body).toEqual({ id: 7, name: 'Dogs' });
      const categories = await ui.execute<Category[]>('listCategories');
      expect(categories.status).toBe(200);
      expect(categories.body).toEqual([{ id: 7, name: 'Dogs' }, { id: 8, name: 'Cats' }]);
      const firstCategory = await ui.execute<Category[]>('listCategories', { parameters: { limit: '1' } });
      expect(firstCategory.body).toEqual([{ id: 7, name: 'Dogs' }]);
      expect(firstCategory.headers.link).toMatch(/^<\/v1\/categories\?[^>]*cursor=[^>]*>; rel="next"$/);
      const unnamed = await ui.execute('deleteCategory', { parameters: { categoryId: '7' } });
      expect(unnamed.status).toBe(204);
      expect(unnamed.body).toBeUndefined();
      expect((await ui.execute<Category[]>('listCategories', { parameters: { limit: '20' } })).body).toEqual([{ id: 8, name: 'Cats' }]);

      // API keys (1.3.0). The key authorized was made by the CLI, so it holds every scope.
      // createApiKey as the page opens it: the editor holds the contract's first example, a
      // read-only storefront key; the person names it. 201 with the secret, shown this once.
      const createApiKey = await ui.open('createApiKey');
      expect(JSON.parse(await createApiKey.locator('textarea.body-param__text').inputValue())).toEqual({ name: 'storefront', scopes: ['pets:read'] });
      const issued = await ui.execute<ApiKeyWithSecret>('createApiKey', { body: JSON.stringify({ name: `Storefront ${suffix}`, scopes: ['pets:read'] }) });
      expect(issued.status).toBe(201);
      expect(issued.body).toMatchObject({ name: `Storefront ${suffix}`, scopes: ['pets:read'], prefix: issued.body.secret.slice(0, 8) });
      expect(issued.body.secret).toMatch(SECRET);
      expect(issued.headers.location).toBe(`/v1/api-keys/${issued.body.id}`);
      const keyId = String(issued.body.id);
      // listApiKeys: the CLI's key with every scope, the new one with pets:read, no secret.
      const keys = await ui.execute<ApiKey[]>('listApiKeys');
      expect(keys.status).toBe(200);
      expect(keys.body.map(({ name, scopes }) => ({ name, scopes: [...scopes].sort() }))).toEqual([
        { name: 'browser', scopes: ['keys:manage', 'orders:read', 'orders:write', 'pets:read', 'pets:write', 'webhooks:manage'] },
        { name: `Storefront ${suffix}`, scopes: ['pets:read'] },
      ]);
      expect(keys.body.filter((each) => 'secret' in each)).toEqual([]);
      const shownKey = await ui.execute<ApiKey>('getApiKey', { parameters: { keyId } });
      expect(shownKey.status).toBe(200);
      expect(shownKey.body).toMatchObject({ id: issued.body.id, prefix: issued.body.prefix, scopes: ['pets:read'] });
      expect(shownKey.body).not.toHaveProperty('secret');
      // rotateApiKey as the page opens it: the editor holds the first example, a day's grace.
      const rotateApiKey = await ui.open('rotateApiKey');
      expect(JSON.parse(await rotateApiKey.locator('textarea.body-param__text').inputValue())).toEqual({ graceSeconds: 86400 });
      const rotated = await ui.execute<ApiKeyWithSecret>('rotateApiKey', { parameters: { keyId } });
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).toMatch(SECRET);
      expect(rotated.body.secret).not.toBe(issued.body.secret);
      expect(Date.parse(rotated.body.previousSecretExpiresAt ?? '')).toBeGreaterThan(Date.now() + 86_000_000);
      // revokeApiKey with its optional body as the page fills it; a revoked key cannot be rotated (409).
      const revokedKey = await ui.execute<ApiKey>('revokeApiKey', { parameters: { keyId } });
      expect(revokedKey.status).toBe(200);
      expect(revokedKey.body.revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      const inactive = await ui.execute<ApiError>('rotateApiKey', { body: JSON.stringify({ graceSeconds: 0 }) });
      expect(inactive.status).toBe(409);
      expect(inactive.body).toMatchObject({ code: 'api_key_inactive', status: 409 });

      // Events (1.4.0): every change above is in the feed, in the order written; the feed
      // always names a next page. getEvent reads one of them.
      const events = await ui.execute<Event[]>('listEvents', { parameters: { limit: '100' } });
      expect(events.status).toBe(200);
      expect(events.body.map((e) => e.id)).toEqual([...events.body.map((e) => e.id)].sort((a, b) => a - b));
      expect(events.body.filter((e) => e.type === 'pet.created').map((e) => (e.data as Pet).name)).toEqual(expect.arrayContaining([...names]));
      expect(events.body.some((e) => e.type === 'order.completed')).toBe(true);
      expect(events.headers.link).toMatch(/^<\/v1\/events\?[^>]*cursor=[^>]*>; rel="next"$/);
      const firstEvent = events.body[0] as Event;
      const oneEvent = await ui.execute<Event>('getEvent', { parameters: { eventId: String(firstEvent.id) } });
      expect(oneEvent.status).toBe(200);
      expect(oneEvent.body).toEqual(firstEvent);

      // Webhook endpoints (1.4.0). createWebhookEndpoint as the page opens it holds the
      // contract's example (https://warehouse.example/...); the person replaces its URL (no
      // request of this test names a host that would need DNS): one that is not http(s) is
      // 400; a loopback one, which this service allows (WEBHOOK_ALLOW_PRIVATE=true), is 201
      // with the secret, shown this once.
      const createEndpoint = await ui.open('createWebhookEndpoint');
      expect(JSON.parse(await createEndpoint.locator('textarea.body-param__text').inputValue())).toEqual({ url: 'https://warehouse.example/hooks/animal-store', eventTypes: ['order.completed'], description: 'ships sold animals' });
      const refusedUrl = await ui.execute<ApiError>('createWebhookEndpoint', { body: JSON.stringify({ url: 'ftp://127.0.0.1/hook', eventTypes: ['order.completed'] }) });
      expect(refusedUrl.status).toBe(400);
      expect(refusedUrl.body).toMatchObject({ code: 'bad_request', status: 400 });
      const hook = await ui.execute<WebhookEndpointWithSecret>('createWebhookEndpoint', { body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', eventTypes: ['order.completed'], description: `warehouse ${suffix}` }) });
      expect(hook.status).toBe(201);
      expect(hook.body).toMatchObject({ url: 'http://127.0.0.1:9/hook', eventTypes: ['order.completed'], enabled: true });
      expect(hook.body.secret).toMatch(WHSEC);
      expect(hook.headers.location).toBe(`/v1/webhook-endpoints/${hook.body.id}`);
      const endpointId = String(hook.body.id);
      // updateWebhookEndpoint as the page opens it: a merge patch; disabled at once.
      const disabled = await ui.execute<WebhookEndpoint>('updateWebhookEndpoint', { parameters: { endpointId }, body: JSON.stringify({ enabled: false }) });
      expect(await disabled.response.request().headerValue('content-type')).toBe('application/merge-patch+json');
      expect(disabled.status).toBe(200);
      expect(disabled.body).toMatchObject({ id: hook.body.id, enabled: false });
      const { secret: _shownOnce, ...stored } = hook.body;
      const endpoints = await ui.execute<WebhookEndpoint[]>('listWebhookEndpoints');
      expect(endpoints.status).toBe(200);
      // Disabled by its key: `disabledAt` says when, and no `disabledReason` (only the service gives one).
      expect(endpoints.body).toEqual([{ ...stored, enabled: false, disabledAt: disabled.body.disabledAt }]);
      expect(Date.parse(String(disabled.body.disabledAt))).toBeGreaterThanOrEqual(Date.parse(stored.createdAt));
      expect(disabled.body).not.toHaveProperty('disabledReason');
      const endpoint = await ui.execute<WebhookEndpoint>('getWebhookEndpoint', { parameters: { endpointId } });
      expect(endpoint.status).toBe(200);
      expect(endpoint.body).toEqual(disabled.body);
      expect(endpoint.body).not.toHaveProperty('secret');
      const rotatedHook = await ui.execute<WebhookEndpointWithSecret>('rotateWebhookEndpointSecret', { parameters: { endpointId } });
      expect(rotatedHook.status).toBe(200);
      expect(rotatedHook.body.secret).toMatch(WHSEC);
      expect(rotatedHook.body.secret).not.toBe(hook.body.secret);
      const deliveries = await ui.execute<unknown[]>('listWebhookDeliveries', { parameters: { endpointId } });
      expect(deliveries.status).toBe(200);
      expect(deliveries.body).toEqual([]);
      const unhooked = await ui.execute('deleteWebhookEndpoint', { parameters: { endpointId } });
      expect(unhooked.status).toBe(204);
      expect(unhooked.body).toBeUndefined();

      // Every operation of the contract was tried: a new one fails here until it is.
      expect([...ui.executed].sort()).toEqual(operations.map(({ operationId }) => operationId).sort());

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
      // Chromium logs every 4xx answer as a console error: the refusals above, and nothing else
      // (a 304 is not one).
      const refusal = (status: string, path: string) => ({ text: `Failed to load resource: the server responded with a status of ${status}`, url: `${url}/v1${path}` });
      expect(errors.consoleErrors).toEqual([
        refusal('409 (Conflict)', '/store/orders'),
        refusal('412 (Precondition Failed)', `/pets/${draftId}`),
        refusal('409 (Conflict)', `/pets/${draftId}`),
        refusal('412 (Precondition Failed)', `/pets/${draftId}`),
        refusal('409 (Conflict)', '/categories/8'),
        refusal('409 (Conflict)', `/api-keys/${keyId}/rotate`),
        refusal('400 (Bad Request)', '/webhook-endpoints'),
      ]);
    });
    // Ample: each of the 51 Executes waits for a render and an answer on a shared 2-core
    // machine, beside the rest of the suite; a timeout here says nothing about the page.
  }, 1_800_000);

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
      expect(eventTypes).toHaveLength(9);
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
    });
  }, 600_000);

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
      // Nothing was created by the refused call (the database is this test's alone).
      expect(listed.body).toEqual([]);

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
      for (const name of [`Pickle ${suffix}`, `Crumpet ${suffix}`]) {
        const created = await ui.execute<Pet>('createPet', { body: JSON.stringify({ name, categoryId: 1, status: 'available' }) });
        expect(created.status).toBe(201);
        const placed = await ui.execute<Order>('placeOrder', { body: JSON.stringify({ petId: created.body.id }) });
        expect(placed.status).toBe(201);
        orderIds.push(placed.body.id);
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
    });
  }, 600_000);

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

      // The sidebar lists the operations under their tags; each one opens its section.
      const menuLink = (text: string) => page.locator('[data-component-name="Menu/MenuItem"] > a').filter({ has: page.locator(`span[data-text="${text}"]`) });
      // The contract's tags, the last first, so that the screenshot ends on the first (pets:
      // getPet deprecated).
      const tags = [...new Set(operations.map(({ tag }) => tag))].reverse();
      const found: string[] = [];
      for (const tag of tags) {
        await menuLink(tag).click();
        for (const { operationId, summary, deprecated } of operations.filter((candidate) => candidate.tag === tag)) {
          const link = menuLink(summary);
          await link.waitFor();
          expect(await link.isVisible(), summary).toBe(true);
          await link.click();
          const heading = page.locator('[data-item-kind="httpItem"] h2').filter({ hasText: summary });
          await heading.waitFor();
          expect(await heading.isVisible(), summary).toBe(true);
          // The heading holds the summary, plus a "Deprecated" badge exactly on the deprecated
          // (empty lines dropped: in this run's sequence the webhook endpoints' headings can
          // read with a leading line break, which the same page opened alone does not show).
          // Read until it holds text: under load Redoc can re-render the section just after
          // the heading shows, and the text read in between is empty.
          let lines: string[] = [];
          for (const started = Date.now(); lines.length === 0 && Date.now() - started < 10_000; ) {
            lines = (await heading.innerText()).split('\n').map((line) => line.trim()).filter((line) => line !== '');
            if (lines.length === 0) await page.waitForTimeout(50);
          }
          expect(lines[0]).toBe(summary);
          if (deprecated) expect(lines, summary).toContain('Deprecated');
          else expect(lines, summary).not.toContain('Deprecated');
          found.push(operationId);
        }
      }
      expect(found.sort()).toEqual(operations.map(({ operationId }) => operationId).sort());

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
