// The error codes are defined once, in src/errors/catalogue.ts; the contract lists them twice (the
// Error schema's `x-extensible-enum`, and the table in its description), and so does
// docs/contract.md. All of them must say the same: the same codes, each with one status.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ERROR_LENGTHS, errorBody, shown } from '../../src/errors/catalogue.js';
import { MAX_DETAILS } from '../../src/errors/validation-messages.js';
import { specDocument } from '../contract.js';

const catalogue = Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([code, { status }]) => [code, status]));
const errorSchema = specDocument.components.schemas.Error;

/** `| \`code\` | 404 | ... |` rows of a Markdown table, as code → status. */
function tableRows(markdown: string, columns: 'code-status' | 'status-code'): Record<string, number> {
  const rows: Record<string, number> = {};
  const row = columns === 'code-status' ? /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/gm : /^\|\s*(\d{3})\s*\|\s*`([a-z_]+)`\s*\|/gm;
  for (const match of markdown.matchAll(row)) {
    const [code, status] = columns === 'code-status' ? [match[1], match[2]] : [match[2], match[1]];
    expect(rows[code as string], `${code} is listed twice`).toBeUndefined();
    rows[code as string] = Number(status);
  }
  return rows;
}

describe('the error catalogue (src/errors/catalogue.ts) and the contract', () => {
  it.each([
    ["the Error schema's x-extensible-enum", { given: () => errorSchema.properties.code['x-extensible-enum'] as string[], want: Object.keys(catalogue) }],
  ])('%s lists exactly the catalogue\'s codes', (_title, { given, want }) => {
    expect([...given()].sort()).toEqual([...want].sort());
  });

  it.each([
    ["the Error schema's table (openapi/v1.yaml)", { given: () => tableRows(errorSchema.description as string, 'code-status') }],
    ["docs/contract.md's table", { given: () => tableRows(readFileSync(new URL('../../docs/contract.md', import.meta.url), 'utf8'), 'status-code') }],
  ])('%s gives every code of the catalogue its status, and no other code', (_title, { given }) => {
    expect(given()).toEqual(catalogue);
  });

  it('gives each code one status, and every status of the contract a code', () => {
    // Every error status an operation declares has a code in the catalogue.
    const declared = new Set<number>();
    for (const item of Object.values(specDocument.paths as Record<string, Record<string, { responses?: Record<string, unknown> }>>)) {
      for (const operation of Object.values(item)) for (const status of Object.keys(operation.responses ?? {})) if (Number(status) >= 400) declared.add(Number(status));
    }
    const statuses = new Set(Object.values(catalogue));
    for (const status of declared) expect(statuses, `status ${status}`).toContain(status);
  });
});

describe("the Error body's bounds (src/errors/catalogue.ts) and the contract", () => {
  const detail = specDocument.components.schemas.ErrorDetail;
  it('holds every answer to the maxLength and maxItems the contract gives', () => {
    expect(ERROR_LENGTHS).toEqual({
      message: errorSchema.properties.message.maxLength,
      field: detail.properties.field.maxLength,
      detailMessage: detail.properties.message.maxLength,
    });
    expect(MAX_DETAILS).toBe(errorSchema.properties.details.maxItems);
  });

  it('cuts what is longer, ending in "...", never inside a surrogate pair', () => {
    const long = '🐦'.repeat(2000);
    const body = errorBody('bad_request', long, [{ location: 'body', field: long, rule: 'type', message: long }]);
    expect(body.message).toHaveLength(ERROR_LENGTHS.message - 1);
    expect(body.message.endsWith('🐦...')).toBe(true);
    expect(body.details?.[0]?.field).toHaveLength(ERROR_LENGTHS.field - 1);
    expect(body.details?.[0]?.message).toHaveLength(ERROR_LENGTHS.detailMessage - 1);
    expect(shown('x'.repeat(61))).toBe(`${'x'.repeat(60)}...`);
    expect(shown('x'.repeat(60))).toBe('x'.repeat(60));
  });
});
