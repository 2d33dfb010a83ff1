// A wrong setting stops start-up with one line that names the variable.
import { describe, expect, it } from 'vitest';
import { runTs } from './process.js';

const database = 'postgres://postgres@127.0.0.1:1/unused';

describe('configuration', () => {
  it.each([
    ['PORT not a number', { given: { DATABASE_URL: database, PORT: 'abc' }, want: 'PORT' }],
    ['PORT out of range', { given: { DATABASE_URL: database, PORT: '70000' }, want: 'PORT' }],
    ['LOG_LEVEL unknown', { given: { DATABASE_URL: database, LOG_LEVEL: 'loud' }, want: 'LOG_LEVEL' }],
    ['DATABASE_URL not PostgreSQL', { given: { DATABASE_URL: 'mysql://localhost/db' }, want: 'DATABASE_URL' }],
    ['DB_POOL_MAX zero', { given: { DATABASE_URL: database, DB_POOL_MAX: '0' }, want: 'DB_POOL_MAX' }],
    ['METRICS unknown', { given: { DATABASE_URL: database, METRICS: 'public' }, want: 'METRICS' }],
    ['LOG_LEVEL unknown lists the allowed values', { given: { DATABASE_URL: database, LOG_LEVEL: 'verbose' }, want: 'LOG_LEVEL must be equal to one of the allowed values (fatal, error, warn, info, debug, trace, silent)' }],
    ['METRICS unknown lists the allowed values', { given: { DATABASE_URL: database, METRICS: 'public' }, want: 'METRICS must be equal to one of the allowed values (off, open, token)' }],
    ['METRICS=token without a token', { given: { DATABASE_URL: database, METRICS: 'token' }, want: 'METRICS_TOKEN' }],
    ['METRICS_TOKEN too short', { given: { DATABASE_URL: database, METRICS: 'token', METRICS_TOKEN: 'short' }, want: 'METRICS_TOKEN' }],
    ['DATABASE_READ_URL without DATABASE_URL', { given: { DATABASE_READ_URL: database }, want: 'DATABASE_READ_URL' }],
    ...['0', '86401', 'abc', '1.5', '-5'].map((value): [string, { given: Record<string, string>; want: string }] => [
      `ORDER_HOLD_SECONDS=${value} names the allowed range`,
      { given: { DATABASE_URL: database, ORDER_HOLD_SECONDS: value }, want: 'ORDER_HOLD_SECONDS must be an integer from 1 to 86400' },
    ]),
    ...['0', '3651', 'abc', '1.5'].map((value): [string, { given: Record<string, string>; want: string }] => [
      `EVENT_RETENTION_DAYS=${value} names the allowed range`,
      { given: { DATABASE_URL: database, EVENT_RETENTION_DAYS: value }, want: 'EVENT_RETENTION_DAYS must be an integer from 1 to 3650' },
    ]),
    ['EVENTS_NATS_URL not a NATS URL', { given: { DATABASE_URL: database, EVENTS_NATS_URL: 'http://127.0.0.1:4222' }, want: 'EVENTS_NATS_URL' }],
  ])('%s: exit 1, one line naming the variable', async (_title, { given, want }) => {
    const result = await runTs('src/server.ts', [], given);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Invalid configuration: /);
    expect(lines[0]).toContain(want);
    expect(result.stdout).toBe('');
  });
});

describe('where the service listens', () => {
  it('a port already in use stops start-up naming HOST:PORT and saying to set PORT', async () => {
    const { createServer } = await import('node:net');
    const { createTestDatabase } = await import('./helper.js');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const database = await createTestDatabase();
    try {
      const result = await runTs('src/server.ts', [], { DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'silent' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Start-up failed: 127.0.0.1:${port} is already in use (EADDRINUSE): set PORT to a free port (or PORT=0 for any), or stop what listens there`);
    } finally {
      taken.close();
      await database.drop();
    }
  });
});
