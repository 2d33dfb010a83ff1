// INTERFACE.md's facts, checked against openapi/v1.yaml (the file a person edits, not the
// generated copy), so a spec edit that contradicts the interface fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

type Json = Record<string, any>;
const spec: Json = parse(readFileSync(new URL('../../openapi/v1.yaml', import.meta.url), 'utf8'));

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

describe('INTERFACE.md section 1 and 9: servers and version', () => {
  it('is OpenAPI 3.1, interface version 1.x (1.0.0 plus backward-compatible additions)', () => {
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info.version).toMatch(/^1\.\d+\.\d+$/);
  });
  it('lists production and staging, both under /v1', () => {
    expect(spec.servers.map((s: Json) => s.description)).toEqual(['Production', 'Staging']);
    for (const server of spec.servers) expect(server.url).toMatch(/\/v1$/);
  });
});

describe('INTERFACE.md section 4: operations', () => {
  it.each([
    ['listPets', { want: { method: 'get', path: '/pets' } }],
    ['createPet', { want: { method: 'post', path: '/pets' } }],
    ['getPet', { want: { method: 'get', path: '/pets/{petId}' } }],
    ['listOrders', { want: { method: 'get', path: '/store/orders' } }],
  ])('%s is %o', (id, { want }) => {
    const { method, path } = byId(id);
    expect({ method, path }).toEqual(want);
  });

  it('has exactly these four operations', () => {
    expect(operations.map((o) => o.op.operationId).sort()).toEqual(['createPet', 'getPet', 'listOrders', 'listPets']);
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
    ['listOrders', { want: ['401', '501'] }],
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

  it('every operation carries x-stability; only listOrders is experimental', () => {
    for (const { op } of operations) {
      expect(op['x-stability']).toBe(op.operationId === 'listOrders' ? 'experimental' : 'stable');
    }
  });
});

describe('INTERFACE.md section 2: schemas', () => {
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
  it('Pet has every NewPet field plus a required int64 id', () => {
    const pet = schemas.Pet;
    expect(pet.required).toEqual(['id', 'name', 'categoryId']);
    expect(Object.keys(pet.properties).sort()).toEqual([...Object.keys(schemas.NewPet.properties), 'id'].sort());
    expect(deref(pet.properties.id)).toMatchObject({ type: 'integer', format: 'int64' });
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

describe('INTERFACE.md sections 5 and 7: authentication and errors', () => {
  it('bearerAuth is an http bearer scheme', () => {
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it.each(operations.map((o) => [o.op.operationId as string, o] as const))('%s requires bearerAuth', (_id, { op }) => {
    const security = op.security ?? spec.security;
    expect(security).toEqual([{ bearerAuth: [] }]);
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
