// The contract as served by the running service: the bundled spec byte for byte, apart
// from the server list, which starts with the serving instance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import openapi, { yamlSource } from '../../generated/openapi.js';
import { buildTestApp, type TestApp } from '../helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t.close());

const thisServer = { url: 'http://api.test:8080/v1', description: 'This server' };

describe('the served contract', () => {
  it('/v1/openapi.json is the bundled spec with this server listed first, without authentication', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/openapi.json', headers: { host: 'api.test:8080' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toBe(JSON.stringify({ ...openapi, servers: [thisServer, ...openapi.servers] }));
  });

  it('/v1/openapi.yaml is openapi/v1.yaml with only the servers block changed', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/openapi.yaml', headers: { host: 'api.test:8080' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/yaml; charset=utf-8');
    const served = parse(response.body) as typeof openapi;
    expect(served.servers).toEqual([thisServer, ...openapi.servers]);
    expect({ ...served, servers: [] }).toEqual({ ...openapi, servers: [] });
    // Outside the servers block, the text is the hand-written file's, comments and all.
    const cut = (text: string) => text.replace(/^servers:\n(?:(?:[ \t].*)?\n)*/m, '');
    expect(cut(response.body)).toBe(cut(yamlSource));
  });

  it.each(['/v1/openapi.json', '/v1/openapi.yaml'])('%s has an ETag, caching headers, and answers 304 to a matching If-None-Match', async (url) => {
    const first = await t.api({ method: 'GET', url, headers: { host: 'api.test:8080' } });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    expect(first.headers.vary).toBe('Host');
    const again = await t.api({ method: 'GET', url, headers: { host: 'api.test:8080', 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    // Another host is another document, with another ETag.
    const other = await t.api({ method: 'GET', url, headers: { host: 'other.test', 'if-none-match': etag } });
    expect(other.statusCode).toBe(200);
    expect(other.headers.etag).not.toBe(etag);
  });

  it('does not echo a Host that is not a plain host name', async () => {
    const response = await t.api({ method: 'GET', url: '/v1/openapi.json', headers: { host: 'evil.test/"><script>' } });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body).servers).toEqual(openapi.servers);
  });

  it('the Swagger UI document lists this server first too', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/docs/json', headers: { host: 'api.test:8080' } });
    expect(response.statusCode).toBe(200);
    expect(response.json().servers[0]).toEqual(thisServer);
    expect(response.json().paths['/pets/{petId}'].get.deprecated).toBe(true);
  });
});
