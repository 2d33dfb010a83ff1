// The replication helper itself: the replica follows the primary, refuses writes, and
// pausing replay really holds changes back (received, not applied) until it is resumed.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicatedPair, type ReplicatedPair } from './replication.js';

let pair: ReplicatedPair;
let primary: pg.Client;
let replica: pg.Client;

beforeAll(async () => {
  pair = await startReplicatedPair();
  primary = new pg.Client({ connectionString: pair.primaryUrl });
  replica = new pg.Client({ connectionString: pair.replicaUrl });
  await primary.connect();
  await replica.connect();
}, 120_000);
afterAll(async () => {
  await primary?.end();
  await replica?.end();
  await pair?.stop();
});

const names = async (client: pg.Client) => (await client.query<{ name: string }>('SELECT name FROM animals ORDER BY id')).rows.map((r) => r.name);

describe('startReplicatedPair', () => {
  it('two distinct servers, the second in recovery', async () => {
    expect(pair.primaryUrl).not.toBe(pair.replicaUrl);
    expect((await primary.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]?.r).toBe(false);
    expect((await replica.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]?.r).toBe(true);
  });

  it('a table created and a row inserted on the primary are on the replica after waitForReplay', async () => {
    await primary.query('CREATE TABLE animals (id serial PRIMARY KEY, name text NOT NULL)');
    await primary.query("INSERT INTO animals (name) VALUES ('Rex')");
    await pair.waitForReplay();
    expect(await names(replica)).toEqual(['Rex']);
  });

  it('the replica refuses writes with 25006 read_only_sql_transaction', async () => {
    const refused = await replica.query("INSERT INTO animals (name) VALUES ('Nope')").then(
      () => undefined,
      (error: { code?: string }) => error,
    );
    expect(refused?.code).toBe('25006');
    expect(await names(primary)).toEqual(['Rex']);
  });

  it('while replay is paused a new row stays off the replica even once received; after resume it appears', async () => {
    await pair.pauseReplay();
    try {
      await primary.query("INSERT INTO animals (name) VALUES ('Paused')");
      const target = (await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn;
      // Not a sleep: wait until the replica has the commit on disk, so its absence below
      // is the pause holding it back, not the network being slow.
      for (;;) {
        const received = await replica.query<{ ok: boolean }>('SELECT pg_last_wal_receive_lsn() >= $1::pg_lsn AS ok', [target]);
        if (received.rows[0]?.ok) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(await names(replica)).toEqual(['Rex']);
      await expect(pair.waitForReplay()).rejects.toThrow(/paused/);
    } finally {
      await pair.resumeReplay();
    }
    await pair.waitForReplay();
    expect(await names(replica)).toEqual(['Rex', 'Paused']);
  });
});
