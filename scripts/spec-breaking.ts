// `npm run spec:breaking`: refuses a contract change that would break a client of the
// released contract (openapi/released/v1.yaml).
//
// Two layers:
// 1. A maintained diff tool decides what is breaking in general. Today that is Optic
//    (@useoptic/optic 1.0.9), behind `runDiffTool` so it can be swapped for another.
// 2. Our own policy, which no generic tool knows:
//    - an operation marked `x-stability: experimental` in the released contract may change
//      or disappear freely;
//    - a deprecated operation may be removed only once its `x-sunset` date has passed;
//    - removing `deprecated` is allowed (un-deprecating breaks nobody);
//    - narrowing what a request may carry (a lower maximum, a higher minimum, a shorter
//      maxLength, a new pattern, a new type) is breaking; Optic misses these.
//
// Usage: tsx scripts/spec-breaking.ts [--base FILE] [--head FILE] [--today YYYY-MM-DD]
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

type Json = Record<string, any>;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index >= 0 && process.argv[index + 1] ? (process.argv[index + 1] as string) : fallback;
}

function operationsOf(doc: Json): Map<string, Json> {
  const found = new Map<string, Json>();
  for (const [p, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const m of methods) if (item[m]) found.set(`${m.toUpperCase()} ${p}`, item[m]);
  }
  return found;
}

function removeOperation(doc: Json, key: string): void {
  const [method, p] = key.split(' ') as [string, string];
  delete doc.paths[p][method.toLowerCase()];
  if (Object.keys(doc.paths[p]).every((k) => !methods.includes(k))) delete doc.paths[p];
}

/** Applies the policy to copies of the two documents; returns policy violations. */
export function applyPolicy(base: Json, head: Json, today: string): string[] {
  const problems: string[] = [];
  const headOps = operationsOf(head);
  for (const [key, op] of operationsOf(base)) {
    const name = op.operationId ?? key;
    if (op['x-stability'] === 'experimental') {
      // Free to change: compare neither side.
      removeOperation(base, key);
      if (headOps.has(key)) removeOperation(head, key);
      continue;
    }
    const next = headOps.get(key);
    if (next?.['x-stability'] === 'experimental') problems.push(`${name}: a stable operation cannot become experimental`);
    if (!next && op.deprecated === true) {
      const sunset = String(op['x-sunset'] ?? '');
      if (sunset && sunset <= today) removeOperation(base, key);
      else problems.push(`${name}: deprecated, but may not be removed before its sunset (${sunset || 'no x-sunset'}); today is ${today}`);
    }
  }
  return problems;
}

function deref(doc: Json, node: Json | undefined): Json | undefined {
  let current = node;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops++) {
    current = current.$ref.slice(2).split('/').reduce((at: Json | undefined, k: string) => at?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return current;
}

const types = (schema: Json): string[] => (Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []);

/** Ways in which `head` accepts less than `base` did, for a schema a client sends. */
function narrowings(baseDoc: Json, headDoc: Json, baseNode: Json | undefined, headNode: Json | undefined, where: string, depth = 0): string[] {
  const b = deref(baseDoc, baseNode);
  const h = deref(headDoc, headNode);
  if (!b || !h || depth > 10) return [];
  const found: string[] = [];
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const raised = (k: string) => num(h[k]) !== undefined && (num(b[k]) === undefined || (num(h[k]) as number) > (num(b[k]) as number));
  const lowered = (k: string) => num(h[k]) !== undefined && (num(b[k]) === undefined || (num(h[k]) as number) < (num(b[k]) as number));
  for (const k of ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']) {
    if (raised(k)) found.push(`${where}: ${k} raised from ${b[k] ?? 'none'} to ${h[k]}`);
  }
  for (const k of ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']) {
    if (lowered(k)) found.push(`${where}: ${k} lowered from ${b[k] ?? 'none'} to ${h[k]}`);
  }
  if (h.pattern !== undefined && h.pattern !== b.pattern) found.push(`${where}: pattern changed from ${b.pattern ?? 'none'} to ${h.pattern}`);
  if (h.format !== undefined && h.format !== b.format) found.push(`${where}: format changed from ${b.format ?? 'none'} to ${h.format}`);
  const bt = types(b);
  const ht = types(h);
  if (ht.length > 0 && bt.some((t) => !ht.includes(t) && !(t === 'integer' && ht.includes('number')))) {
    found.push(`${where}: type changed from ${bt.join('|')} to ${ht.join('|')}`);
  }
  if (Array.isArray(h.enum)) {
    const removed = Array.isArray(b.enum) ? b.enum.filter((v: unknown) => !h.enum.includes(v)) : ['(any value)'];
    if (removed.length > 0) found.push(`${where}: enum no longer accepts ${removed.join(', ')}`);
  }
  for (const name of (h.required ?? []) as string[]) {
    if (!((b.required ?? []) as string[]).includes(name)) found.push(`${where}: property ${name} is now required`);
  }
  if (h.additionalProperties === false && b.additionalProperties !== false) found.push(`${where}: unknown properties are now refused`);
  for (const [name, prop] of Object.entries((h.properties ?? {}) as Json)) {
    if (b.properties?.[name]) found.push(...narrowings(baseDoc, headDoc, b.properties[name], prop, `${where}.${name}`, depth + 1));
  }
  if (b.items && h.items) found.push(...narrowings(baseDoc, headDoc, b.items, h.items, `${where}[]`, depth + 1));
  return found;
}

/** Request-side narrowings across every operation present in both documents. */
export function requestNarrowings(base: Json, head: Json): string[] {
  const found: string[] = [];
  const headOps = operationsOf(head);
  for (const [key, op] of operationsOf(base)) {
    const next = headOps.get(key);
    if (!next) continue;
    const name = op.operationId ?? key;
    const params = (o: Json, doc: Json) => new Map(((o.parameters ?? []) as Json[]).map((p) => deref(doc, p) as Json).map((p) => [`${p.in} ${p.name}`, p]));
    const before = params(op, base);
    for (const [id, p] of params(next, head)) {
      const old = before.get(id);
      if (old) found.push(...narrowings(base, head, old.schema, p.schema, `${name} ${id}`));
    }
    const body = (o: Json, doc: Json) => deref(doc, o.requestBody)?.content?.['application/json']?.schema;
    found.push(...narrowings(base, head, body(op, base), body(next, head), `${name} body`));
  }
  return found;
}

/** The general-purpose diff tool. Returns its exit status and what it printed. */
async function runDiffTool(baseFile: string, headFile: string): Promise<{ ok: boolean; output: string }> {
  const env = { ...process.env, NO_UPDATE_NOTIFIER: '1', OPTIC_TELEMETRY_LEVEL: 'off', SCARF_ANALYTICS: 'false' };
  const bin = path.join(root, 'node_modules/.bin/optic');
  const result = await promisify(execFile)(bin, ['diff', baseFile, headFile, '--check', '--standard', path.join(root, 'openapi/optic.yml')], {
    env,
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    (r) => ({ ok: true, output: r.stdout + r.stderr }),
    (e: { stdout?: string; stderr?: string }) => ({ ok: false, output: (e.stdout ?? '') + (e.stderr ?? '') }),
  );
  return result;
}

export async function checkBreaking(baseFile: string, headFile: string, today: string): Promise<{ ok: boolean; report: string }> {
  const base = parse(readFileSync(baseFile, 'utf8')) as Json;
  const head = parse(readFileSync(headFile, 'utf8')) as Json;
  const policy = applyPolicy(base, head, today);
  const narrowed = requestNarrowings(base, head);
  const dir = mkdtempSync(path.join(tmpdir(), 'spec-breaking-'));
  try {
    const b = path.join(dir, 'base.json');
    const h = path.join(dir, 'head.json');
    writeFileSync(b, JSON.stringify(base));
    writeFileSync(h, JSON.stringify(head));
    const tool = await runDiffTool(b, h);
    const lines = [
      ...policy.map((p) => `policy: ${p}`),
      ...narrowed.map((n) => `narrowed request: ${n}`),
      ...(tool.ok ? [] : [tool.output.trim()]),
    ];
    return { ok: tool.ok && policy.length === 0 && narrowed.length === 0, report: lines.join('\n') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const baseFile = option('--base', path.join(root, 'openapi/released/v1.yaml'));
  const headFile = option('--head', path.join(root, 'openapi/v1.yaml'));
  const today = option('--today', new Date().toISOString().slice(0, 10));
  const { ok, report } = await checkBreaking(baseFile, headFile, today);
  if (ok) {
    console.log(`spec:breaking: no breaking change from ${path.relative(root, baseFile)} to ${path.relative(root, headFile)}`);
  } else {
    console.error(`spec:breaking: BREAKING changes from ${path.relative(root, baseFile)} to ${path.relative(root, headFile)}:\n${report}`);
    process.exit(1);
  }
}
