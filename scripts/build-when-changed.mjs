// @ts-check
// `npm start`'s prestart: compiles the service (`tsc -b tsconfig.build.json`) only when what
// the compilation reads has changed since the last successful one; otherwise returns at once.
//
// Why not just `tsc -b`: it already skips an up-to-date build, but deciding that costs
// about 0.4-1 s, most of it loading TypeScript itself, on every start (issue 26: a restart
// must be ready in under 3 s). This script decides from a fingerprint instead, in a few
// milliseconds, without loading TypeScript.
//
// The fingerprint is a SHA-256 over the path and content of every input: each file under
// src/ and generated/ (what tsconfig.build.json includes; nothing in them imports from
// elsewhere), both tsconfigs, package.json and package-lock.json (the installed TypeScript
// and @types packages). Content, not modification times: a `git checkout` or a copy that
// keeps times cannot make a stale dist/ look fresh. It is written next to the output only
// after `tsc -b` succeeded, and removed before it runs, so a build with type errors is tried
// again on every start (and fails it) until the error is fixed.
//
// Plain JavaScript on purpose: run by node itself, with no compiler or loader to start.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// The Node majors package.json's engines names (22 and 24): an older one is refused here,
// before anything is compiled or started, with what to do. Node 20 left its support on
// 2026-04-30; the service is not tested on it.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const engines = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node;
  console.error(`The Animal Store API needs Node 22 or 24 (package.json engines: ${engines}); this is Node ${process.versions.node}. Install Node 24 (https://nodejs.org), then run npm ci && npm start again.`);
  process.exit(1);
}
const INPUT_DIRS = ['src', 'generated'];
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];
const FINGERPRINT = path.join(root, 'dist', 'build-inputs.sha256');
// What `npm start` runs: without it dist/ is not a build, whatever the fingerprint says.
const ENTRY = path.join(root, 'dist', 'src', 'server.js');

/** @param {string} dir @returns {string[]} every file under `dir`, relative to the root */
function filesUnder(dir) {
  const absolute = path.join(root, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/** @returns {string} */
function fingerprint() {
  const hash = createHash('sha256');
  const files = [...INPUT_DIRS.flatMap(filesUnder), ...INPUT_FILES.filter((f) => existsSync(path.join(root, f)))].sort();
  for (const file of files) {
    // Path and length first: moving bytes from one file to the next changes the hash.
    const content = readFileSync(path.join(root, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

const current = fingerprint();
const recorded = existsSync(FINGERPRINT) ? readFileSync(FINGERPRINT, 'utf8').trim() : undefined;
if (recorded !== current || !existsSync(ENTRY)) {
  // Gone until this build succeeds: a failed `tsc -b` still writes what it compiled into
  // dist/, so an edit that is then undone must not find the old fingerprint and serve that.
  rmSync(FINGERPRINT, { force: true });
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  writeFileSync(FINGERPRINT, `${current}\n`);
}
