// `npm run spec:breaking` on pairs of contracts: the released one (or a variant of it) as
// base, a changed copy as head. Each case says whether a client of the base would break.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { checkBreaking } from '../../scripts/spec-breaking.js';

type Spec = Record<string, any>;
const source = readFileSync(new URL('../../openapi/released/v1.yaml', import.meta.url), 'utf8');
const BEFORE_SUNSET = '2026-11-21';
const AFTER_SUNSET = '2030-12-06';

interface Case {
  /** Changes to both sides first (to build a base the released contract does not have). */
  both?: (spec: Spec) => void;
  head: (spec: Spec) => void;
  today?: string;
  want: 'refused' | 'accepted';
  /** A fragment the report must contain, for refusals. */
  says?: string;
}

async function run({ both, head, today }: Case) {
  const dir = mkdtempSync(path.join(tmpdir(), 'breaking-'));
  const base = parse(source) as Spec;
  both?.(base);
  const changed = structuredClone(base);
  head(changed);
  writeFileSync(path.join(dir, 'base.yaml'), stringify(base));
  writeFileSync(path.join(dir, 'head.yaml'), stringify(changed));
  return checkBreaking(path.join(dir, 'base.yaml'), path.join(dir, 'head.yaml'), today ?? BEFORE_SUNSET);
}

const schemas = (s: Spec) => s.components.schemas;
const listPets = (s: Spec) => s.paths['/pets'].get;

describe('spec:breaking', () => {
  it.concurrent.each<[string, Case]>([
    // Breaking: each must be refused.
    ['removing an operation', { head: (s) => delete s.paths['/pets'].post, want: 'refused', says: 'remove' }],
    ['removing a response field', { head: (s) => delete schemas(s).Pet.properties.status, want: 'refused', says: 'status' }],
    [
      'renaming a response field',
      {
        head: (s) => {
          const pet = schemas(s).Pet;
          pet.properties.petName = pet.properties.name;
          delete pet.properties.name;
          pet.required = ['id', 'petName', 'categoryId'];
        },
        want: 'refused',
        says: 'name',
      },
    ],
    ['making a parameter required', { head: (s) => (s.components.parameters.StatusFilter.required = true), want: 'refused', says: 'required' }],
    ['removing an enum value', { head: (s) => (schemas(s).PetStatus.enum = ['available', 'pending']), want: 'refused', says: 'sold' }],
    ['narrowing a bound (limit maximum 100 -> 50)', { head: (s) => (s.components.parameters.Limit.schema.maximum = 50), want: 'refused', says: 'maximum lowered from 100 to 50' }],
    ['narrowing a bound (name maxLength 100 -> 50)', { head: (s) => (schemas(s).NewPet.properties.name.maxLength = 50), want: 'refused', says: 'maxLength lowered' }],
    ['narrowing a type (int64 -> int32)', { head: (s) => (schemas(s).Id.format = 'int32'), want: 'refused', says: 'format changed' }],
    [
      'adding a required request field',
      {
        head: (s) => {
          schemas(s).NewPet.properties.colour = { type: 'string' };
          schemas(s).NewPet.required.push('colour');
        },
        want: 'refused',
        says: 'colour',
      },
    ],
    [
      'changing a status code (201 -> 200)',
      {
        head: (s) => {
          const responses = s.paths['/pets'].post.responses;
          responses['200'] = responses['201'];
          delete responses['201'];
        },
        want: 'refused',
        says: '201',
      },
    ],
    ["changing a parameter's type (limit integer -> string)", { head: (s) => (s.components.parameters.Limit.schema = { type: 'string' }), want: 'refused', says: 'limit' }],

    // Harmless: each must be accepted.
    ['adding an optional response field', { head: (s) => (schemas(s).Pet.properties.nickname = { type: 'string' }), want: 'accepted' }],
    ['adding an optional parameter', { head: (s) => listPets(s).parameters.push({ name: 'q', in: 'query', required: false, schema: { type: 'string' } }), want: 'accepted' }],
    [
      'adding an operation',
      {
        head: (s) =>
          (s.paths['/categories'] = {
            get: { ...structuredClone(listPets(s)), operationId: 'listCategories', summary: 'List categories', parameters: [] },
          }),
        want: 'accepted',
      },
    ],
    [
      'adding an enum value to a request-only field',
      {
        both: (s) => listPets(s).parameters.push({ name: 'sort', in: 'query', required: false, schema: { type: 'string', enum: ['id'] } }),
        head: (s) => (listPets(s).parameters.at(-1).schema.enum = ['id', 'name']),
        want: 'accepted',
      },
    ],
    [
      'editing descriptions and summaries',
      {
        head: (s) => {
          s.info.description += '\nMore words.';
          listPets(s).summary = 'List the animals';
          schemas(s).Pet.description = 'An animal.';
        },
        want: 'accepted',
      },
    ],
    ['widening a bound (limit maximum 100 -> 200)', { head: (s) => (s.components.parameters.Limit.schema.maximum = 200), want: 'accepted' }],

    // Our policy: sunset.
    ['removing deprecated getPet before its sunset', { head: (s) => delete s.paths['/pets/{petId}'], today: BEFORE_SUNSET, want: 'refused', says: 'may not be removed before its sunset (2030-12-05)' }],
    ['removing deprecated getPet after its sunset', { head: (s) => delete s.paths['/pets/{petId}'], today: AFTER_SUNSET, want: 'accepted' }],
    ['removing a non-deprecated operation after that date all the same', { head: (s) => delete s.paths['/pets'].get, today: AFTER_SUNSET, want: 'refused' }],
    ['removing `deprecated` from getPet', { head: (s) => delete s.paths['/pets/{petId}'].get.deprecated, want: 'accepted' }],

    // Our policy: experimental.
    ['removing experimental listOrders', { head: (s) => delete s.paths['/store/orders'], want: 'accepted' }],
    [
      'changing experimental listOrders (a new required parameter, 501 -> 200)',
      {
        head: (s) => {
          const op = s.paths['/store/orders'].get;
          op.parameters = [{ name: 'since', in: 'query', required: true, schema: { type: 'string' } }];
          op.responses['200'] = op.responses['501'];
          delete op.responses['501'];
        },
        want: 'accepted',
      },
    ],
    ['marking a stable operation experimental', { head: (s) => (listPets(s)['x-stability'] = 'experimental'), want: 'refused', says: 'cannot become experimental' }],
    ['the same contract', { head: () => {}, want: 'accepted' }],
  ])('%s', async (_title, testCase) => {
    const { ok, report } = await run(testCase);
    expect(ok ? 'accepted' : 'refused', report).toBe(testCase.want);
    if (testCase.says) expect(report).toContain(testCase.says);
  });
});
