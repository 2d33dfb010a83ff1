// Operators' tool for API keys:
//   apikey create <name> [--scopes <scope>,...] [--expires <date-time or duration>]
//                          prints the new key alone on stdout (it is never shown again);
//                          every scope unless --scopes names some; no expiry unless --expires
//   apikey list            id, name, created, revoked, expires, last used, scopes; never a secret
//   apikey revoke <id>     the key stops working on every instance within a second
import { parseArgs } from 'node:util';
import { newSecret } from '../auth/apiKeys.js';
import { SCOPES, isScope, type Scope } from '../auth/scopes.js';
import { ConfigError } from '../config.js';
import { spec } from '../contract/spec.js';
import { createApiKeysRepository } from '../db/api-keys.js';
import { openDatabase } from './database.js';

const usage = [
  'usage: apikey create <name> [--scopes <scope>,...] [--expires <when>]',
  '       apikey list',
  '       apikey revoke <id>',
  '       apikey --help',
  `scopes: ${SCOPES.join(', ')} (default: all of them)`,
  'when: an ISO 8601 date-time with its offset (2030-01-01T00:00:00Z), or a duration from now: 30d, 12h, 90m, 45s (default: never)',
].join('\n');

class UsageError extends Error {}

/** The scopes of `--scopes a,b`, each one of the contract's. */
function scopesOf(list: string): Scope[] {
  const named = list.split(',').map((s) => s.trim());
  const unknown = named.find((s) => !isScope(s));
  if (unknown !== undefined) throw new UsageError(`apikey create: ${unknown === '' ? 'an empty scope' : `unknown scope "${unknown}"`} in --scopes; the scopes are ${SCOPES.join(', ')}`);
  return named as Scope[];
}

const DURATION = /^([1-9][0-9]{0,5})([dhms])$/;
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 } as const;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** When `--expires` says the key stops working. */
function expiryOf(value: string, now = Date.now()): Date {
  const duration = DURATION.exec(value);
  const at = duration ? now + Number(duration[1]) * UNIT_MS[duration[2] as keyof typeof UNIT_MS] : DATE_TIME.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(at)) throw new UsageError(`apikey create: --expires ${value} is neither a date-time with its offset (2030-01-01T00:00:00Z) nor a duration (30d, 12h, 90m, 45s)`);
  if (at <= now) throw new UsageError(`apikey create: --expires ${value} is not in the future; give a later time`);
  return new Date(at);
}

/** A key's name as the contract's NewApiKey takes it: its pattern and length. */
const name = spec.components.schemas.NewApiKey.properties.name;
const NAME = new RegExp(name.pattern, 'u');
const validName = (text: string | undefined): boolean => text !== undefined && NAME.test(text) && [...text].length >= name.minLength && [...text].length <= name.maxLength;

function table(rows: string[][]): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((row) => `${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`).join('');
}

async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, strict: true, options: { scopes: { type: 'string' }, expires: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help || positionals[0] === 'help') {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const [command, argument, ...rest] = positionals;
  if (rest.length > 0 || !command || !['create', 'list', 'revoke'].includes(command)) throw new UsageError(usage);
  if (command !== 'create' && (values.scopes !== undefined || values.expires !== undefined)) throw new UsageError(`apikey ${command}: --scopes and --expires are for create\n${usage}`);
  if (command === 'create' && !validName(argument)) throw new UsageError(`apikey create: give a name of ${name.minLength} to ${name.maxLength} characters, ${name['x-pattern-description']}`);
  if (command === 'revoke' && !/^[1-9][0-9]{0,15}$/.test(argument ?? '')) throw new UsageError('apikey revoke: give the numeric id shown by `apikey list`');
  if (command === 'list' && argument !== undefined) throw new UsageError(usage);
  const scopes = values.scopes === undefined ? undefined : scopesOf(values.scopes);
  const expiresAt = values.expires === undefined ? undefined : expiryOf(values.expires);

  const db = await openDatabase();
  try {
    const apiKeys = createApiKeysRepository(db.pool);
    if (command === 'create') {
      const { secret, hash, prefix } = newSecret();
      const key = await apiKeys.create({ name: argument as string, hash, prefix, ...(scopes ? { scopes } : {}), ...(expiresAt ? { expiresAt } : {}) });
      const expiry = key.expiresAt ? `expires ${key.expiresAt}` : 'never expires';
      process.stderr.write(`Created API key ${key.id} (${key.name}): scopes ${key.scopes.join(', ')}; ${expiry}. It is shown once; store it now.\n`);
      process.stdout.write(`${secret}\n`);
    } else if (command === 'list') {
      const keys = await apiKeys.all();
      // No prefix: nothing of a secret, not even its first characters, is printed here.
      const rows = keys.map((k) => [String(k.id), k.name, k.createdAt, k.revokedAt ?? '-', k.expiresAt ?? '-', k.lastUsedAt ?? '-', k.scopes.join(',')]);
      process.stdout.write(table([['ID', 'NAME', 'CREATED', 'REVOKED', 'EXPIRES', 'LAST_USED', 'SCOPES'], ...rows]));
    } else {
      const revoked = await apiKeys.revoke(Number(argument));
      if (revoked.outcome === 'not-found') return fail(`apikey revoke: no key has id ${argument}; see \`apikey list\``, 1);
      if (revoked.outcome === 'already-revoked') return fail(`apikey revoke: key ${argument} was already revoked at ${revoked.key.revokedAt}`, 1);
      process.stderr.write(`Revoked API key ${argument}.\n`);
    }
    return 0;
  } finally {
    await db.close();
  }
}

function fail(message: string, code: number): number {
  process.stderr.write(`${message}\n`);
  return code;
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  // A usage mistake (parseArgs' own included: an unknown option, a missing value) is exit 2.
  const code = (error as { code?: unknown }).code;
  const usageMistake = error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'));
  if (usageMistake) process.exitCode = fail(error instanceof UsageError ? error.message : `apikey: ${(error as Error).message}\n${usage}`, 2);
  else {
    process.stderr.write(`apikey: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
