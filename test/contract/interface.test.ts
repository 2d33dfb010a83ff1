// The interface's facts, checked against openapi/v1.yaml (the file a person edits, not the
// generated copy), so a spec edit that contradicts the interface fails here. The interface
// is the product's INTERFACE.md, copied unchanged into docs/interface.md (section numbers
// below are its own); the first block reads its facts from that copy, so the copy, this
// file's expectations and the spec cannot drift apart unseen.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

type Json = Record<string, any>;
const spec: Json = parse(readFileSync(new URL('../../openapi/v1.yaml', import.meta.url), 'utf8'));
const interfaceFile = readFileSync(new URL('../../docs/interface.md', import.meta.url), 'utf8');

/** Follows local `$ref`s such as `#/components/schemas/Pet`. */
function deref(node: Json): Json {
  let current = node;
  while (current && typeof current.$ref === 'string') {
    current = current.$ref
      .slice(2)
      .split('/')
      .map((part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((at: Json, key: string) => at[key], spec);
  }
  return current;
}

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const operations = Object.entries(spec.paths as Json).flatMap(([path, item]) =>
  methods.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] as Json })),
);
const byId = (id: string) => {
  const found = operations.find((o) => o.op.operationId === id);
  if (!found) throw new Error(`no operation ${id}`);
  return found;
};

// docs/interface.md: a provenance note, a line (---), then the interface as the product wrote it.
const [note = '', document = ''] = interfaceFile.split(/\n---\n\n/, 2);
/** The text of a section of the interface, from its heading (`## 4.` or `### 4.1`) to the next one of its level or above. */
function section(number: string): string {
  const level = number.includes('.') && !number.endsWith('.') ? '###' : '##';
  const start = document.indexOf(`\n${level} ${number} `);
  if (start < 0) throw new Error(`docs/interface.md has no section ${number}`);
  const rest = document.slice(start + 1);
  const next = rest.slice(level.length).search(level === '##' ? /\n## / : /\n##+ /);
  return next < 0 ? rest : rest.slice(0, next + level.length);
}
/** The backquoted first cells of a section's table rows. */
const firstCells = (text: string) => [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);

describe('docs/interface.md: the requirements, as the repository keeps them', () => {
  it('is the interface document unchanged: the text below the line has the digest its note records', () => {
    const recorded = /`([0-9a-f]{64})`/.exec(note)?.[1];
    expect(recorded, 'the note names the SHA-256 of the copied text').toBeDefined();
    expect(createHash('sha256').update(document.trimEnd()).digest('hex')).toBe(recorded);
    expect(document).toMatch(/^# Animal Store Service Interface\n/);
  });

  it('section 1: two base addresses, production and staging, each under /v1, are the servers', () => {
    const text = section('1.');
    expect(text).toContain('served under two base addresses, each with the path prefix `/v1`');
    const named = [...text.matchAll(/^ {2}- (\w+): `\{\w+\}`/gm)].map((m) => m[1]);
    expect(named).toEqual(['production', 'staging']);
    expect(spec.servers.map((s: Json) => String(s.description).toLowerCase())).toEqual(named);
  });

  it('section 4: each operation at the method and path it names', () => {
    const named = [...section('4.').matchAll(/- Method and path: `(\w+) (\S+)`\n- Operation name: `(\w+)`/g)].map(([, method, path, id]) => ({ id, method, path }));
    expect(named.map((n) => n.id)).toEqual(['listPets', 'createPet', 'getPet']);
    for (const { id, method, path } of named) expect({ method: byId(id as string).method, path: byId(id as string).path }).toEqual({ method: method?.toLowerCase(), path });
    // 4.4: named, its shape not shown.
    expect(section('4.4')).toContain('`GET /store/orders` is named');
    expect(byId('listOrders')).toMatchObject({ method: 'get', path: '/store/orders' });
  });

  it('sections 2.1 and 4.1: the status values and the limit parameter', () => {
    expect(deref(spec.components.schemas.PetStatus).enum).toEqual(firstCells(section('2.1')));
    const row = /^\| `limit` \| integer \| no \| minimum (\d+), maximum (\d+) \| (\d+) \|/m.exec(section('4.1'));
    expect(row, 'the limit row of 4.1').not.toBeNull();
    const [, minimum, maximum, dflt] = (row as RegExpExecArray).map(Number);
    const limit = byId('listPets').op.parameters.map(deref).find((p: Json) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ minimum, maximum, default: dflt });
  });

  it('sections 2.2, 2.3 and 2.5: the required fields of NewPet, Pet and Error', () => {
    const required = (number: string) => [...section(number).matchAll(/^\| `(\w+)` \|[^\n]*\| yes \|/gm)].map((m) => m[1]);
    expect(spec.components.schemas.NewPet.required).toEqual(required('2.2'));
    // Pet requires the interface's fields first, in its order; any it requires beyond them
    // are additions of 1.x that the service sets (read-only, not part of NewPet), so a
    // client written against the interface never has to send them.
    const pet = spec.components.schemas.Pet;
    const interfaceRequired = [...required('2.3'), ...required('2.2')];
    expect(interfaceRequired).toEqual(['id', 'name', 'categoryId']);
    expect(pet.required.slice(0, interfaceRequired.length)).toEqual(interfaceRequired);
    for (const name of pet.required.slice(interfaceRequired.length)) {
      expect(pet.properties[name], `Pet.${name}, required beyond the interface`).toMatchObject({ readOnly: true });
      expect(spec.components.schemas.NewPet.properties[name], `NewPet.${name}`).toBeUndefined();
    }
    expect(spec.components.schemas.Error.required).toEqual(required('2.5'));
  });

  it('sections 4.3 and 9: getPet is removed on the date the interface gives', () => {
    const date = /Scheduled for removal on (\d{1,2} \w+ \d{4})\./.exec(section('4.3'))?.[1];
    expect(date).toBeDefined();
    const sunset = new Date(`${date} UTC`).toISOString().slice(0, 10);
    expect(byId('getPet').op['x-sunset']).toBe(sunset);
    expect(section('9.')).toContain(`will be removed on ${date}`);
  });
});

describe('sections 1 and 9: servers and version', () => {
  it('is OpenAPI 3.1, interface version 1.x (1.0.0 plus backward-compatible additions)', () => {
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info.version).toMatch(/^1\.\d+\.\d+$/);
  });
  it('lists production and staging, both under /v1, each once and written out in full', () => {
    expect(spec.servers.map((s: Json) => s.description)).toEqual(['Production', 'Staging']);
    for (const server of spec.servers) {
      expect(new URL(server.url).pathname).toBe('/v1');
      // SDK generators type a base URL as these strings: no `{host}` template reaches them.
      expect(server.variables).toBeUndefined();
    }
    expect(new Set(spec.servers.map((s: Json) => s.url)).size).toBe(2);
  });
});

describe('section 4: operations', () => {
  it.each([
    ['listPets', { want: { method: 'get', path: '/pets' } }],
    ['createPet', { want: { method: 'post', path: '/pets' } }],
    ['getPet', { want: { method: 'get', path: '/pets/{petId}' } }],
    ['listOrders', { want: { method: 'get', path: '/store/orders' } }],
  ])('%s is %o', (id, { want }) => {
    const { method, path } = byId(id);
    expect({ method, path }).toEqual(want);
  });

  // A new operation needs no edit here: the list holds those released, which stay.
  it("keeps the interface's four operations, the store's that 1.2.0 added, those of 1.3.0 and those of 1.4.0", () => {
    expect(operations.map((o) => o.op.operationId)).toEqual(
      expect.arrayContaining([
        ...['cancelOrder', 'completeOrder', 'createApiKey', 'createPet', 'deleteCategory', 'deletePet', 'getApiKey', 'getCategory', 'getInventory', 'getOrder', 'getPet', 'listApiKeys', 'listCategories', 'listOrders', 'listPets', 'placeOrder', 'putCategory', 'revokeApiKey', 'rotateApiKey', 'updatePet'],
        ...['listEvents', 'getEvent', 'createWebhookEndpoint', 'listWebhookEndpoints', 'getWebhookEndpoint', 'updateWebhookEndpoint', 'deleteWebhookEndpoint', 'rotateWebhookEndpointSecret', 'listWebhookDeliveries'],
      ]),
    );
  });

  it('listPets takes limit 1..100 default 20 and the status filter', () => {
    const params = byId('listPets').op.parameters.map(deref);
    const limit = params.find((p: Json) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } });
    const status = params.find((p: Json) => p.name === 'status');
    expect(status.in).toBe('query');
    expect(status.required).toBe(false);
    expect(deref(status.schema).enum).toEqual(['available', 'pending', 'sold']);
    expect(deref(status.schema).default).toBeUndefined();
  });

  it.each([
    ['listPets', { want: ['200', '400', '401'] }],
    ['createPet', { want: ['201', '400', '401'] }],
    ['getPet', { want: ['200', '400', '401', '404'] }],
    ['listOrders', { want: ['200', '400', '401'] }],
  ])('%s declares at least %o', (id, { want }) => {
    expect(Object.keys(byId(id).op.responses)).toEqual(expect.arrayContaining(want));
  });

  it('createPet takes a required NewPet body and answers 201 with a Pet and Location', () => {
    const { op } = byId('createPet');
    expect(op.requestBody.required).toBe(true);
    expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/NewPet');
    const created = deref(op.responses['201']);
    expect(created.content['application/json'].schema.$ref).toBe('#/components/schemas/Pet');
    expect(created.headers.Location.required).toBe(true);
  });

  it('getPet is deprecated, sunsets on 2030-12-05 and names listPets as its successor', () => {
    const { op } = byId('getPet');
    expect(op.deprecated).toBe(true);
    expect(op['x-sunset']).toBe('2030-12-05');
    expect(op['x-successor']).toBe('listPets');
    const petId = op.parameters.map(deref).find((p: Json) => p.name === 'petId');
    expect(petId).toMatchObject({ in: 'path', required: true });
    expect(deref(petId.schema)).toMatchObject({ type: 'integer', format: 'int64' });
    for (const response of Object.values(op.responses as Json).map(deref)) {
      if (!response.headers) continue;
      expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
    }
  });

  it('every operation carries x-stability, stable since the store was designed (1.2.0)', () => {
    for (const { op } of operations) expect(op['x-stability']).toBe('stable');
  });
});

describe('section 2: schemas', () => {
  const schemas = spec.components.schemas;
  it('PetStatus is available | pending | sold', () => {
    expect(schemas.PetStatus).toMatchObject({ type: 'string', enum: ['available', 'pending', 'sold'] });
  });
  it('NewPet requires name and categoryId; status is optional with no default; no id', () => {
    const newPet = schemas.NewPet;
    expect(newPet.required).toEqual(['name', 'categoryId']);
    expect(newPet.properties.name.type).toBe('string');
    expect(deref(newPet.properties.categoryId)).toMatchObject({ type: 'integer', format: 'int64' });
    expect(newPet.properties.status.$ref).toBe('#/components/schemas/PetStatus');
    expect(newPet.properties.status.default).toBeUndefined();
    expect(newPet.properties.id).toBeUndefined();
    expect(newPet.additionalProperties).toBe(false);
  });
  it('Pet has every NewPet field plus a required int64 id; any other field is read-only, set by the service', () => {
    const pet = schemas.Pet;
    expect(pet.required.slice(0, 3)).toEqual(['id', 'name', 'categoryId']);
    const newPetFields = Object.keys(schemas.NewPet.properties);
    expect(Object.keys(pet.properties)).toEqual(expect.arrayContaining([...newPetFields, 'id']));
    expect(deref(pet.properties.id)).toMatchObject({ type: 'integer', format: 'int64' });
    // Beyond the interface (1.x additions): fields a client cannot send (NewPet refuses
    // unknown fields) and the service writes, marked read-only; every field Pet requires is
    // one of the interface's or one of these.
    const added = Object.keys(pet.properties).filter((name) => name !== 'id' && !newPetFields.includes(name));
    for (const name of added) expect(pet.properties[name], `Pet.${name}`).toMatchObject({ readOnly: true });
    expect(pet.required.filter((name: string) => !['id', 'name', 'categoryId'].includes(name) && !added.includes(name))).toEqual([]);
    expect(schemas.NewPet.additionalProperties).toBe(false);
  });
  it('Pets is a plain array of Pet', () => {
    expect(schemas.Pets).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Pet' } });
  });
  it('Error is {code: string, message: string, status: integer}, all required', () => {
    expect(schemas.Error.required).toEqual(['code', 'message', 'status']);
    expect(schemas.Error.properties.code.type).toBe('string');
    expect(schemas.Error.properties.message.type).toBe('string');
    expect(schemas.Error.properties.status.type).toBe('integer');
    // No `enum` on code: new codes must not break clients.
    expect(schemas.Error.properties.code.enum).toBeUndefined();
  });
  it('identifiers stop at 2^53 - 1 so no JSON parser rounds them', () => {
    expect(schemas.Id.maximum).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('sections 5 and 7: authentication and errors', () => {
  it('bearerAuth is an http bearer scheme', () => {
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  // With the one scope it needs (1.3.0), or one of two (listEvents and getEvent, 1.4.0: each
  // alternative one scope), or none (rotateApiKey, 1.5.0: a key rotates its own secret):
  // which, test/api/scopes.test.ts holds against the service.
  it.each(operations.map((o) => [o.op.operationId as string, o] as const))('%s requires bearerAuth, with one scope in each alternative (rotateApiKey: none)', (id, { op }) => {
    const security = op.security ?? spec.security;
    if (id === 'rotateApiKey') {
      expect(security).toEqual([{ bearerAuth: [] }]);
      return;
    }
    const alternatives = ['listEvents', 'getEvent'].includes(id) ? 2 : 1;
    expect(security).toEqual(Array.from({ length: alternatives }, () => ({ bearerAuth: [expect.any(String)] })));
    for (const requirement of security) expect(spec.components.schemas.Scope.enum).toContain(requirement.bearerAuth[0]);
  });

  // Read by people choosing a key's scopes: it must list what each scope opens, all of it.
  it("the Scope schema's description names each scope's operations, as their security requirements say", () => {
    const named = Object.fromEntries(
      [...(spec.components.schemas.Scope.description as string).matchAll(/`([a-z]+:[a-z]+)`\s+\(([^)]+)\)/g)].map(([, scope, ids]) => [scope, (ids as string).split(/,\s*/).sort()]),
    );
    const needs: Record<string, string[]> = {};
    for (const { op } of operations) {
      const security: { bearerAuth: string[] }[] = op.security ?? spec.security;
      if (security.length === 1 && security[0]?.bearerAuth.length === 1) (needs[security[0].bearerAuth[0] as string] ??= []).push(op.operationId);
    }
    for (const ids of Object.values(needs)) ids.sort();
    expect(named, 'list each operation under its scope in the Scope schema\'s description (openapi/v1.yaml)').toEqual(needs);
  });

  it.each(operations.map((o) => [o.op.operationId as string, o] as const))('%s answers every error with the Error body', (_id, { op }) => {
    for (const [status, ref] of Object.entries(op.responses as Json)) {
      if (Number(status) < 400) continue;
      expect(deref(ref).content['application/json'].schema.$ref, status).toBe('#/components/schemas/Error');
    }
  });

  it.each(operations.map((o) => [o.op.operationId as string, o] as const))('%s documents the WWW-Authenticate challenge on 401', (_id, { op }) => {
    expect(deref(deref(op.responses['401']).headers['WWW-Authenticate']).required).toBe(true);
  });
});
