// Redoc 3 (from @redocly/cli build-docs) draws an "API docs by Redocly" logo in its sidebar
// from cdn.redoc.ly, and no option turns it off. The reference must load nothing from
// another host, so the address becomes an empty data: URL (`withoutCdn`, which the page the
// service serves at /docs/redoc applies to Redoc's bundle too). Usage:
// tsx scripts/docs-offline.ts <html>
import { readFileSync, writeFileSync } from 'node:fs';
import { withoutCdn } from '../src/plugins/redoc.js';

const file = process.argv[2] ?? 'dist/docs/index.html';
writeFileSync(file, withoutCdn(readFileSync(file, 'utf8')));
