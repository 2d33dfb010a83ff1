// `npm run spec:release`: publishes openapi/v1.yaml as the released contract, the baseline
// that `npm run spec:breaking` compares against. It refuses unless
// - info.version is higher than the released one (semantic versioning),
// - CHANGELOG.md has a "## <version>" entry,
// - the change from the released contract is not breaking.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ACCEPTED_HEADER, checkBreaking } from './spec-breaking.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const head = path.join(root, 'openapi/v1.yaml');
const released = path.join(root, 'openapi/released/v1.yaml');
const version = (file: string) => String((parse(readFileSync(file, 'utf8')) as { info: { version: string } }).info.version);
const parts = (v: string) => v.split('.').map(Number);

function fail(message: string): never {
  console.error(`spec:release: ${message}`);
  process.exit(1);
}

const next = version(head);
const previous = version(released);
const [a, b] = [parts(next), parts(previous)];
if (!/^\d+\.\d+\.\d+$/.test(next)) fail(`info.version ${next} is not MAJOR.MINOR.PATCH`);
if ((a[0] ?? 0) !== (b[0] ?? 0)) fail(`a new major version is a new contract (/v${a[0]}), not a release of /v${b[0]}`);
const higher = (a[1] ?? 0) > (b[1] ?? 0) || ((a[1] ?? 0) === (b[1] ?? 0) && (a[2] ?? 0) > (b[2] ?? 0));
if (!higher) fail(`info.version ${next} must be higher than the released ${previous} (minor for additions, patch for prose)`);
if (!new RegExp(`^## ${next.replace(/\./g, '\\.')}\\b`, 'm').test(readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8'))) {
  fail(`CHANGELOG.md has no "## ${next}" entry`);
}
const accepted = path.join(root, 'openapi/accepted-breaks.yaml');
const { ok, report } = await checkBreaking(released, head, new Date().toISOString().slice(0, 10), accepted);
if (!ok) fail(`the change from ${previous} is breaking:\n${report}`);
copyFileSync(head, released);
// What was accepted is in the released contract now: nothing is left to accept.
writeFileSync(accepted, ACCEPTED_HEADER + '[]\n');
console.log(`spec:release: openapi/released/v1.yaml is now ${next}. Commit it with CHANGELOG.md.`);
