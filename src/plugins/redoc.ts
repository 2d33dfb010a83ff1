// Redoc at /docs/redoc: the same contract Swagger UI shows (its document at /docs/json, this
// instance first in the server list), rendered by the same Redoc 3 that `npm run docs`
// writes a static page with: the standalone bundle @redocly/cli ships (pinned, a production
// dependency for this page). Nothing comes from another host: the bundle is served from
// here, and its one CDN address, an attribution logo no option turns off, is rewritten by
// `withoutCdn` (which `npm run docs` applies to its page too, scripts/docs-offline.ts).
//
// The page is a `<redoc>` element whose attributes are Redoc's options (the spec's URL,
// telemetry off) and one module script from this host: no inline script, so it renders
// under helmet's default Content-Security-Policy (src/plugins/helmet.ts), which the docs
// plugin's scope applies to it as to Swagger UI.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Redoc's attribution logo on cdn.redoc.ly: the only address outside this host it asks for. */
const CDN_LOGO = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;

/**
 * Redoc's page or bundle with its CDN logo's address made an empty data: URL: the image
 * fails at once and Redoc drops it, exactly as it does offline.
 */
export function withoutCdn(text: string): string {
  return text.replace(CDN_LOGO, 'data:,');
}

/** The standalone bundle inside @redocly/cli (an ES module exporting `init` and `hydrate`). */
const BUNDLE = '@redocly/cli/lib/chunks/redoc.standalone.js';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

interface Served {
  body: Buffer;
  etag: string;
}

function served(body: string): Served {
  return { body: Buffer.from(body), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

// Read on the first request for it, once per process: 2.3 MB that most instances never serve.
let bundle: Served | undefined;
const loadBundle = (): Served => (bundle ??= served(withoutCdn(readFileSync(createRequire(import.meta.url).resolve(BUNDLE), 'utf8'))));

export interface RedocOptions {
  /** Where the page is served: `<docs prefix>/redoc`. */
  path: string;
  /** The contract as JSON, with this instance first among the servers. */
  specUrl: string;
  /** The page's icon. */
  iconUrl: string;
  title: string;
}

/** Registers the page and its bundle on `fastify` (the docs plugin's scope, with its headers). */
export function redoc(fastify: FastifyInstance, options: RedocOptions): void {
  const script = `${options.path}/redoc.standalone.js`;
  const page = served(
    `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<link rel="icon" type="image/svg+xml" href="${options.iconUrl}">
</head>
<body>
<redoc spec-url="${options.specUrl}" disable-telemetry="true"></redoc>
<script type="module" src="${script}"></script>
</body>
</html>
`,
  );
  const send = (what: () => Served, type: string) => (request: FastifyRequest, reply: FastifyReply) => {
    const { body, etag } = what();
    reply.header('etag', etag).header('cache-control', 'public, max-age=300');
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type(type).send(body);
  };
  fastify.get(options.path, send(() => page, 'text/html; charset=utf-8'));
  fastify.get(script, send(loadBundle, 'text/javascript; charset=utf-8'));
}
