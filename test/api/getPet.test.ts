// GET /v1/pets/{petId} (getPet), deprecated: docs/interface.md 4.3, 7 and 9.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, PET_TIMES } from '../helper.js';

let t: TestApp;
let petId: number;
beforeAll(async () => {
  t = await buildTestApp();
  const created = await t.api({ method: 'POST', url: '/v1/pets', headers: t.auth, payload: { name: 'Rex', categoryId: 2, status: 'sold' } });
  petId = created.json().id;
});
afterAll(async () => t.close());

// 2026-11-21 (x-deprecated-since) and 2030-12-05 (x-sunset) in openapi/v1.yaml.
const deprecation = {
  deprecation: '@1795219200',
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
};
// The successor of this request (contract 1.2.0): listPets with the id filter; a petId that
// is not an id names the list alone.
const successor = (petId?: string | number) => `</v1/pets${petId === undefined ? '' : `?id=${petId}`}>; rel="successor-version"`;

describe('getPet', () => {
  it('answers 200 with the Pet', async () => {
    const response = await t.api({ method: 'GET', url: `/v1/pets/${petId}`, headers: t.auth });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id: petId, name: 'Rex', categoryId: 2, status: 'sold', ...PET_TIMES });
  });

  it.each([
    ['an id that was never assigned', { given: '999999', want: 'Pet 999999 does not exist' }],
    ['the largest id, 2^53 - 1', { given: String(Number.MAX_SAFE_INTEGER), want: `Pet ${Number.MAX_SAFE_INTEGER} does not exist` }],
  ])('answers 404 for %s', async (_title, { given, want }) => {
    const response = await t.api({ method: 'GET', url: `/v1/pets/${given}`, headers: t.auth });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ code: 'not_found', message: want, status: 404 });
  });

  it.each([
    ['petId=abc', { given: 'abc', rule: 'type' }],
    ['an empty petId (/v1/pets/)', { given: '', rule: 'type' }],
    ['petId=1.5', { given: '1.5', rule: 'type' }],
    ['petId=0', { given: '0', rule: 'minimum' }],
    ['petId=-3', { given: '-3', rule: 'minimum' }],
    ['petId=2^53, beyond exact doubles', { given: '9007199254740992', rule: 'maximum' }],
    ['petId=2^64', { given: '18446744073709551616', rule: 'maximum' }],
  ])('answers 400 for %s', async (_title, { given, rule }) => {
    const response = await t.api({ method: 'GET', url: `/v1/pets/${given}`, headers: t.auth });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body).toMatchObject({ code: 'bad_request', status: 400 });
    expect(body.message).toContain('path parameter petId');
    expect(body.details).toEqual([expect.objectContaining({ location: 'path', field: 'petId', rule })]);
  });

  it.each([
    ['200', { url: () => `/v1/pets/${petId}`, auth: true, status: 200, link: () => successor(petId) }],
    ['404', { url: () => '/v1/pets/424242', auth: true, status: 404, link: () => successor(424242) }],
    ['400', { url: () => '/v1/pets/abc', auth: true, status: 400, link: () => successor() }],
    ['400 (an id past 2^53)', { url: () => '/v1/pets/18446744073709551616', auth: true, status: 400, link: () => successor() }],
    ['401', { url: () => `/v1/pets/${petId}`, auth: false, status: 401, link: () => successor(petId) }],
  ])('carries Deprecation, Sunset and Link (to GET /pets?id=) on a %s', async (_title, { url, auth, status, link }) => {
    const response = await t.api({ method: 'GET', url: url(), headers: auth ? t.auth : {} });
    expect(response.statusCode).toBe(status);
    expect(response.headers).toMatchObject({ ...deprecation, link: link() });
  });

  it('the other operations carry no deprecation headers', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/pets', headers: t.auth });
    expect(response.headers.deprecation).toBeUndefined();
    expect(response.headers.sunset).toBeUndefined();
  });
});
