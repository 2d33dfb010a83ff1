// What a new reader of the docs meets, over a real socket (issue 26): the /docs page is the
// API's (its title, its icon, no Fastify logo, no "Explore" box), and the served contract
// names each base address once, written out in full, with nothing about /docs in the prose
// that generated SDKs copy into their types. The page as rendered is in test/browser/.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import openapi from '../../generated/openapi.js';
import { listen, type ListeningApp } from '../support/wire.js';

let t: ListeningApp;
beforeAll(async () => {
  t = await listen();
});
afterAll(async () => t.close());

// Fastify's logo, as the plugin would embed it in the page's script when given no logo.
const fastifyLogo = readFileSync(createRequire(import.meta.url).resolve('@fastify/swagger-ui/static/logo.svg')).toString('base64');

describe('the /docs page', () => {
  it('is titled with the contract\'s title and links the API\'s own icon, not Swagger\'s', async () => {
    const response = await fetch(`${t.origin}/docs`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(/<title>([^<]*)<\/title>/.exec(html)?.[1]).toBe(openapi.info.title);
    const icons = [...html.matchAll(/<link rel="icon"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
    expect(icons).toEqual(['/docs/static/theme/favicon.svg']);
    const icon = await fetch(`${t.origin}${icons[0]}`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toMatch(/^<svg /);
  });

  it('runs Swagger UI without its top bar (the Fastify logo and the "Explore" box showing /docs/json)', async () => {
    const response = await fetch(`${t.origin}/docs/static/swagger-initializer.js`);
    expect(response.status).toBe(200);
    const script = await response.text();
    // The configuration the page hands to SwaggerUIBundle.
    expect(script).toContain('"layout":"BaseLayout"');
    expect(script).not.toContain(fastifyLogo);
  });
});

describe('Redoc at /docs/redoc', () => {
  it('is an HTML page under the docs pages\' CSP that references only this host: its icon, its bundle and the contract, each served', async () => {
    const response = await fetch(`${t.origin}/docs/redoc`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // Helmet's policy, as on Swagger UI's page: scripts from this host only, no inline script.
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await response.text();
    expect(/<title>([^<]*)<\/title>/.exec(html)?.[1]).toBe(openapi.info.title);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    // Every address the page names, in any attribute: paths on this host, never another host's.
    const addresses = [...html.matchAll(/\s(?:src|href|spec-url)="([^"]*)"/g)].map((m) => m[1] as string);
    expect(addresses.sort()).toEqual(['/docs/json', '/docs/redoc/redoc.standalone.js', '/docs/static/theme/favicon.svg']);
    expect(html).not.toMatch(/https?:|\/\//);
    const types: Record<string, RegExp> = {
      '/docs/json': /^application\/json/,
      '/docs/redoc/redoc.standalone.js': /^text\/javascript; charset=utf-8$/,
      '/docs/static/theme/favicon.svg': /^image\/svg\+xml$/,
    };
    for (const address of addresses) {
      const asset = await fetch(`${t.origin}${address}`);
      expect(asset.status, address).toBe(200);
      expect(asset.headers.get('content-type'), address).toMatch(types[address] as RegExp);
      await asset.arrayBuffer();
    }
  });

  it('serves Redoc\'s bundle with its CDN logo rewritten to data:, and revalidates it by ETag', async () => {
    const response = await fetch(`${t.origin}/docs/redoc/redoc.standalone.js`);
    const bundle = await response.text();
    expect(bundle).toContain('export{RedocStandalone,hydrate,init}');
    expect(bundle).not.toContain('cdn.redoc.ly');
    const etag = response.headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await fetch(`${t.origin}/docs/redoc/redoc.standalone.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });
});

describe('the served contract, as SDK generators read it', () => {
  it('lists this server, then production and staging: one entry a base address, each a full URL under /v1', async () => {
    const response = await fetch(`${t.origin}/v1/openapi.json`);
    expect(response.status).toBe(200);
    const { servers } = (await response.json()) as { servers: { url: string; description: string; variables?: unknown }[] };
    expect(servers.map((s) => s.description)).toEqual(['This server', 'Production', 'Staging']);
    expect(servers[0]?.url).toBe(`${t.origin}/v1`);
    const urls = servers.map((s) => s.url);
    // A generator types its base URL as the union of these: no template, no repeat.
    expect(new Set(urls).size).toBe(urls.length);
    for (const server of servers) {
      expect(server.variables, server.url).toBeUndefined();
      expect(server.url).not.toMatch(/[{}]/);
      expect(new URL(server.url).pathname).toBe('/v1');
    }
  });

  it('says nothing in its descriptions about the /docs page\'s "Try it out"', async () => {
    const served = await (await fetch(`${t.origin}/v1/openapi.json`)).text();
    const descriptions: string[] = [];
    JSON.parse(served, (key, value: unknown) => {
      if (key === 'description' && typeof value === 'string') descriptions.push(value);
      return value;
    });
    expect(descriptions.length).toBeGreaterThan(20);
    expect(descriptions.filter((d) => /try it out|swagger/i.test(d))).toEqual([]);
  });
});
