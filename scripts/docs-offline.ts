// Redoc 3 (from @redocly/cli build-docs) draws an "API docs by Redocly" logo in its sidebar
// from cdn.redoc.ly, and no option turns it off. The reference must load nothing from
// another host, so the address becomes an empty data: URL; the image then fails at once
// and Redoc drops it, exactly as it does offline. Usage: tsx scripts/docs-offline.ts <html>
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2] ?? 'dist/docs/index.html';
const CDN_LOGO = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;
writeFileSync(file, readFileSync(file, 'utf8').replace(CDN_LOGO, 'data:,'));
