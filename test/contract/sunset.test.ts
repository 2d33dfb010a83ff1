// A deprecated operation is removed at its sunset (getPet: 2030-12-05). Removing it from
// the contract must leave every other operation as it was: nothing else may be built from
// it (createPet's Location once was, and the app would then have failed at import). Here
// the app runs on the contract with its deprecated operations taken out.
import { vi } from 'vitest';

vi.mock('../../generated/openapi.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../generated/openapi.js')>();
  const spec = structuredClone(original.default) as { paths: Record<string, Record<string, { deprecated?: boolean }>> };
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) if (operation.deprecated === true) delete item[method];
    if (Object.keys(item).length === 0) delete spec.paths[path];
  }
  return { ...original, default: spec };
});

// Test files share their worker's modules (vitest.config.ts, isolate: false): the modules
// this file imports are evaluated again, on the mocked contract.
vi.resetModules();
const { afterAll, beforeAll, describe, expect, it } = await import('vitest');
const { default: served } = await import('../../generated/openapi.js');
const { buildTestApp } = await import('../helper.js');

let t: Awaited<ReturnType<typeof buildTestApp>>;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
  // The next file in this worker gets the contract as it is.
  vi.doUnmock('../../generated/openapi.js');
  vi.resetModules();
});

describe('the contract after a sunset: its deprecated operations removed', () => {
  it('has no deprecated operation left (the premise)', () => {
    const deprecated = Object.values(served.paths as Record<string, Record<string, { deprecated?: boolean }>>).flatMap((item) => Object.values(item).filter((o) => o.deprecated));
    expect(deprecated).toEqual([]);
  });

  it('createPet answers as before, Location included', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/pets', headers: { ...t.auth, 'content-type': 'application/json' }, payload: { name: 'Sunset', categoryId: 1 } });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe(`/v1/pets/${created.json().id}`);
  });

  it('listPets answers as before; the removed look-up is a method the path no longer takes', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/v1/pets?limit=1', headers: t.auth })).statusCode).toBe(200);
    // The path stays, for updatePet and deletePet (contract 1.3.0): GET on it is 405.
    const lookUp = await t.app.inject({ method: 'GET', url: '/v1/pets/1', headers: t.auth });
    expect(lookUp.statusCode).toBe(405);
    expect(lookUp.headers.allow).toBe('DELETE, PATCH');
  });
});
