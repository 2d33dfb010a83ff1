// The Swagger UI tests' harness: one database with one API key, the service on it and
// Chromium, shared by a file's tests (each gets a new browser context on /docs, rendered);
// Authorize as a person does; Try it out as a person clicks it.
import type { Browser, Locator, Page, Request, Response } from 'playwright-core';
import { expect } from 'vitest';
import { createTestDatabase } from '../helper.js';
import { apikey, startServer } from '../process.js';
import { launch, operation, watchErrors } from './browser.js';

export interface Docs {
  /** The service, `http://127.0.0.1:port`. */
  url: string;
  /** An API key, created before the service started. */
  key: string;
  page: Page;
  /** Every request of the browser context, from the first. */
  requests: Request[];
  errors: ReturnType<typeof watchErrors>;
}

/** One database with one API key, the service on it and Chromium, shared by the tests of this file. */
interface Shared {
  db: Awaited<ReturnType<typeof createTestDatabase>>;
  server: Awaited<ReturnType<typeof startServer>>;
  browser: Browser;
  key: string;
}
let shared: Shared | undefined;
/** The page that cases asking `keep` share (closed with the browser by stop()). */
let kept: Docs | undefined;

async function start(): Promise<Shared> {
  const db = await createTestDatabase();
  // The key exists before the service starts, so its cache has it from the first request.
  const created = await apikey(['create', 'browser'], db.url);
  expect(created.code, created.stderr).toBe(0);
  const key = created.stdout.trim();
  expect(key).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);
  const server = await startServer({ DATABASE_URL: db.url });
  return { db, server, browser: await launch(), key };
}

/** The service stops cleanly on SIGTERM once the pages are closed. */
export async function stop(): Promise<void> {
  if (!shared) return;
  const { db, server, browser } = shared;
  shared = undefined;
  kept = undefined;
  try {
    await browser.close();
    expect(await server.stop('SIGTERM'), server.output()).toBe(0);
  } finally {
    await server.stop('SIGKILL');
    await db.drop();
  }
}

/**
 * A new browser context showing the service's /docs page (rendered). With `keep`, every case
 * of the file that asks for it gets the same page, in the state the case before left it (a
 * load of Swagger UI is the costliest step of these cases: docs/testing.md).
 */
export async function withDocs(run: (docs: Docs) => Promise<void>, { keep = false }: { keep?: boolean } = {}): Promise<void> {
  if (keep && kept) return run(kept);
  shared ??= await start();
  const { server, browser, key } = shared;
  const context = await browser.newContext();
  try {
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
    const docs = { url: server.url, key, page, requests, errors };
    if (keep) kept = docs;
    await run(docs);
  } finally {
    if (!keep) await context.close();
  }
}

/** The selected server's base path (`/v1`): "Try it out" calls it. */
export async function selectedBasePath(page: Page): Promise<string> {
  return new URL(await page.locator('select#servers').inputValue()).pathname.replace(/\/$/, '');
}

/** Authorize with the key, as a person does: the dialog, the bearerAuth field, Authorize, Close. */
export async function authorize(page: Page, key: string): Promise<void> {
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
export interface Shown<Body = unknown> {
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
 * out", type into the fields, Execute, read the answer the page shows.
 */
export function tryItOut(page: Page, basePath: string) {
  const opened = new Set<string>();
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
    return { status, body: shown, headers, response };
  }

  return { open, execute };
}

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}
export interface Order {
  id: number;
  petId: number;
  status: string;
}
export interface ApiError {
  code: string;
  message: string;
  status: number;
}
export interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  revokedAt?: string;
  previousSecretExpiresAt?: string;
}
export type ApiKeyWithSecret = ApiKey & { secret: string };
export const SECRET = /^ask_[A-Za-z0-9_-]{43}$/;
export const INSUFFICIENT_SCOPE = (scope: string) => `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`;
/** A strong entity tag, as the contract's ETag header. */
export const STRONG_ETAG = /^"[A-Za-z0-9_-]{1,62}"$/;
