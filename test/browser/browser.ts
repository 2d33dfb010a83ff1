// What both documentation pages' browser tests share: the contract's operations as the pages
// show them, Debian's Chromium launched headless (playwright-core), and the errors a page reports.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { beforeAll } from 'vitest';
import openapi from '../../generated/openapi.js';
import { root } from '../process.js';
import { CHROMIUM, requires } from '../support/requires.js';

/** Screenshots, for a human to look at (git-ignored). */
export const artifacts = path.join(root, 'artifacts');

/**
 * Whether this file's browser tests run (test/support/requires.ts); in CI, a missing Chromium
 * fails the file's first hook.
 */
export async function browserRuns(file: string): Promise<boolean> {
  const runs = await requires('chromium', `${file} (the documentation in a browser)`);
  beforeAll(() => {
    // Only reached without Chromium when CI=true: CI installs it, so its absence is a broken machine.
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}, and CI=true: CI must install it (apt-get install chromium). Outside CI this suite is skipped (test/support/requires.ts).`);
    mkdirSync(artifacts, { recursive: true });
  });
  return runs;
}

// The operations of the contract, as both pages show them: Swagger UI names a block
// `operations-{first tag}-{operationId}` and shows the summary; Redoc lists the summary
// under the tag. Read from the contract, so that a new operation is looked for at once.
export interface ContractOperation {
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
export const operations: ContractOperation[] = Object.entries(openapi.paths as Record<string, Partial<Record<string, { operationId?: string; tags?: string[]; summary?: string; deprecated?: boolean }>>>).flatMap(([path, item]) =>
  httpMethods.flatMap((method) => {
    const operation = item[method];
    if (!operation) return [];
    const { operationId, tags, summary } = operation;
    if (!operationId || !tags?.[0] || !summary) throw new Error(`${method.toUpperCase()} ${path} has no operationId, tag or summary in the contract: both pages show them`);
    return [{ operationId, tag: tags[0], summary, method: method.toUpperCase(), path, deprecated: operation.deprecated === true }];
  }),
);
export function operation(operationId: string): ContractOperation {
  const found = operations.find((candidate) => candidate.operationId === operationId);
  if (!found) throw new Error(`The contract has no operation ${operationId}`);
  return found;
}

export function launch(): Promise<Browser> {
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
export function watchErrors(page: Page): { pageErrors: string[]; consoleErrors: { text: string; url: string }[] } {
  const pageErrors: string[] = [];
  const consoleErrors: { text: string; url: string }[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push({ text: message.text(), url: message.location().url });
  });
  return { pageErrors, consoleErrors };
}
