// Operators' tool for API keys:
//   apikey create <name>   prints the new key alone on stdout (it is never shown again)
//   apikey list            id, name, created, revoked; never a secret
//   apikey revoke <id>     the key stops working on every instance within a second
import { ConfigError } from '../config.js';
import { generateApiKey, hashApiKey } from '../auth/apiKeys.js';
import { createApiKeysRepository } from '../db/api-keys.js';
import { openDatabase } from './database.js';

const usage = 'usage: apikey create <name> | apikey list | apikey revoke <id>';

async function run(args: string[]): Promise<number> {
  const [command, argument, ...rest] = args;
  if (rest.length > 0 || !command) return fail(usage, 2);
  if (command === 'create' && (!argument || argument.length > 200)) return fail('apikey create: give a name of 1 to 200 characters', 2);
  if (command === 'revoke' && !/^[1-9][0-9]{0,15}$/.test(argument ?? '')) return fail('apikey revoke: give the numeric id shown by `apikey list`', 2);
  if (command === 'list' && argument !== undefined) return fail(usage, 2);
  if (!['create', 'list', 'revoke'].includes(command)) return fail(usage, 2);

  const db = await openDatabase();
  try {
    const apiKeys = createApiKeysRepository(db.pool);
    if (command === 'create') {
      const key = generateApiKey();
      const record = await apiKeys.insert(argument as string, hashApiKey(key));
      process.stderr.write(`Created API key ${record.id} (${record.name}). It is shown once; store it now.\n`);
      process.stdout.write(`${key}\n`);
    } else if (command === 'list') {
      const keys = await apiKeys.list();
      const rows = keys.map((k) => [String(k.id), k.name, k.createdAt.toISOString(), k.revokedAt ? k.revokedAt.toISOString() : '-']);
      const table = [['ID', 'NAME', 'CREATED', 'REVOKED'], ...rows];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
      for (const row of table) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
    } else {
      const revoked = await apiKeys.revoke(Number(argument));
      if (!revoked) return fail(`apikey revoke: no active key with id ${argument}`, 1);
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
  process.stderr.write(`apikey: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
