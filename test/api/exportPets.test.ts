// GET /v1/pets:export (exportPets): listPets' filters, every matching pet in id order, as
// CSV or NDJSON by Accept (406 otherwise), streamed from one snapshot: pets stored while an
// export is being read are not in it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, createPool } from '../../src/db/pool.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';

let t: TestApp;
/** The pets stored for this file, by name. */
let stored: { id: number; name: string; categoryId: number; status?: string; tags?: string[] }[];
/** A query naming this file's pets by id (the pets other cases add are not among them). */
let theirIds: string;
const names = ['Plain', 'Comma, in name', 'A "quoted" name', 'Ünïcødé 🐦', '=SUM(A1)', 'Tab-free, "both"'];

beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000' } });
  const requests = names.map((name, i) => ({ name, categoryId: 70 + (i % 2), ...(i % 3 === 0 ? {} : { status: i % 3 === 1 ? 'available' : 'sold' }), ...(i % 2 === 0 ? { tags: ['calm', `t-${i}`] } : {}) }));
  const made = await t.api({ method: 'POST', url: '/v1/pets:batchCreate', headers: { ...t.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ requests }) });
  expect(made.statusCode, made.body).toBe(200);
  stored = made.json().pets;
  theirIds = stored.map((p) => `id=${p.id}`).join('&');
});
afterAll(async () => t.close());

const exported = (query: string, accept?: string) => t.api({ method: 'GET', url: `/v1/pets:export${query}`, headers: { ...t.auth, ...(accept === undefined ? {} : { accept }) } });
const csvRow = (p: (typeof stored)[number]) => [String(p.id), p.name, String(p.categoryId), p.status ?? '', (p.tags ?? []).join(' ')];
const HEADER = ['id', 'name', 'categoryId', 'status', 'tags'];

describe('exportPets as CSV', () => {
  it('without Accept: CSV with a header row, each name quoted as RFC 4180 asks, read back exactly', async () => {
    const response = await exported(`?${theirIds}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(response.headers['content-disposition']).toBe('attachment; filename="pets.csv"');
    expect(response.headers.vary).toBe('Accept');
    expect(response.body.startsWith('id,name,categoryId,status,tags\r\n')).toBe(true);
    expect(parse(response.body)).toEqual([HEADER, ...stored.map(csvRow)]);
    // The quoting itself.
    expect(response.body).toContain(',"Comma, in name",');
    expect(response.body).toContain(',"A ""quoted"" name",');
  });

  it('a line end in a value is quoted too, CRLF, LF or CR alone (no name the API takes holds one; a row written by other means may)', async () => {
    const { rows } = await t.pool.query<{ id: string }>(
      "INSERT INTO pets (name, category_id) VALUES ('Line' || chr(13) || chr(10) || 'break', 79), ('new' || chr(10) || 'line', 79), ('cr' || chr(13) || 'name', 79) RETURNING id",
    );
    const response = await exported('?categoryId=79', 'text/csv');
    expect(response.statusCode).toBe(200);
    const [crlf, lf, cr] = rows.map((r) => r.id);
    expect(response.body).toBe(`id,name,categoryId,status,tags\r\n${crlf},"Line\r\nbreak",79,,\r\n${lf},"new\nline",79,,\r\n${cr},"cr\rname",79,,\r\n`);
    expect(parse(response.body, { record_delimiter: '\r\n' }).map((row: string[]) => row[1])).toEqual(['name', 'Line\r\nbreak', 'new\nline', 'cr\rname']);
  });

  it.each([['text/csv'], ['text/*'], ['*/*'], ['application/json;q=1, text/csv;q=0.5'], ['text/csv; charset=utf-8'], ['TEXT/CSV; Charset=UTF-8; header=present']])('Accept: %s is CSV', async (accept) => {
    const response = await exported(`?${theirIds}`, accept);
    expect(response.statusCode).toBe(200);
    expect(String(response.headers['content-type'])).toMatch(/^text\/csv/);
  });

  it('rows in ascending id order as numbers (9 before 10, 99 before 10000)', async () => {
    const { rows } = await t.pool.query<{ id: string }>("INSERT INTO pets (name, category_id) SELECT 'Order ' || i, 78 FROM generate_series(1, 90) AS i RETURNING id");
    // This file's first pets have ids of one digit; these, more digits.
    const ids = [...stored.map((p) => p.id), ...rows.map((r) => Number(r.id))].sort((a, b) => a - b);
    expect(String(ids[0]).length).toBeLessThan(String(ids[ids.length - 1]).length);
    const response = await exported(`?id=${[...ids].reverse().join('&id=')}`, 'text/csv');
    expect(response.statusCode).toBe(200);
    expect((parse(response.body) as string[][]).slice(1).map((row) => Number(row[0]))).toEqual(ids);
  });

  it('HEAD: the headers GET would give, no body', async () => {
    const response = await t.api({ method: 'HEAD', url: `/v1/pets:export?${theirIds}`, headers: t.auth });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(response.body).toBe('');
  });

  it('no pet matched: the header row alone', async () => {
    const response = await exported('?categoryId=999');
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('id,name,categoryId,status,tags\r\n');
  });
});

describe('exportPets as NDJSON', () => {
  it('one Pet per line, as listPets answers it', async () => {
    const response = await exported(`?${theirIds}`, 'application/x-ndjson');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(response.headers['content-disposition']).toBe('attachment; filename="pets.ndjson"');
    expect(response.body.endsWith('\n')).toBe(true);
    const lines = response.body.slice(0, -1).split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(stored);
    const listed = await t.api({ method: 'GET', url: `/v1/pets?${theirIds}&limit=100`, headers: t.auth });
    expect(`[${lines.join(',')}]`).toBe(listed.body);
  });

  it('no pet matched: an empty body', async () => {
    const response = await exported('?categoryId=999', 'application/x-ndjson');
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('');
  });
});

describe("exportPets takes listPets' filters", () => {
  const ndjson = async (query: string) => {
    const response = await exported(query, 'application/x-ndjson');
    expect(response.statusCode, response.body).toBe(200);
    return response.body === '' ? [] : response.body.slice(0, -1).split('\n').map((l) => (JSON.parse(l) as { name: string }).name);
  };
  const of = (keep: (p: (typeof stored)[number]) => boolean) => stored.filter(keep).map((p) => p.name);

  it.each([
    ['status', 'status=available', (p: (typeof stored)[number]) => p.status === 'available'],
    ['categoryId', 'categoryId=71', (p: (typeof stored)[number]) => p.categoryId === 71],
    ['status and categoryId together', 'status=sold&categoryId=70', (p: (typeof stored)[number]) => p.status === 'sold' && p.categoryId === 70],
  ])('%s', async (_title, query, keep) => {
    expect(await ndjson(`?${theirIds}&${query}`)).toEqual(of(keep));
  });

  it('id', async () => {
    const ids = [stored[4], stored[1]].map((p) => p?.id);
    expect(await ndjson(`?id=${ids[0]}&id=${ids[1]}`)).toEqual([stored[1]?.name, stored[4]?.name]);
  });

  it.each([
    ['a parameter exportPets does not take', '?q=abc', 'q'],
    ['an unknown status', '?status=lost', 'status'],
    ['a parameter listPets pages with', '?limit=10', 'limit'],
  ])('%s is 400 naming the parameter', async (_title, query, field) => {
    const response = await exported(query);
    expect(response.statusCode).toBe(400);
    expect(response.json().details[0].field).toBe(field);
  });
});

describe('exportPets refuses an Accept it cannot meet', () => {
  it.each([['application/json'], ['text/html, application/xml;q=0.9'], ['text/csv;q=0'], ['text/csv; header=absent'], ['application/x-ndjson; charset=utf-16']])('Accept: %s is 406 with an Error body, varying by Accept', async (accept) => {
    const response = await exported('', accept);
    expect(response.statusCode).toBe(406);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers.vary).toBe('Accept');
    expect(response.json()).toEqual({
      code: 'not_acceptable',
      message: 'Accept allows neither text/csv nor application/x-ndjson, the formats of an export: send Accept: text/csv or Accept: application/x-ndjson',
      status: 406,
    });
  });

  it('a key without pets:read is 403', async () => {
    const made = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'orders only', scopes: ['orders:read'] }) });
    expect(made.statusCode).toBe(201);
    const response = await t.api({ method: 'GET', url: '/v1/pets:export', headers: { authorization: `Bearer ${made.json().secret}` } });
    expect(response.statusCode).toBe(403);
    expect(response.json().message).toContain('pets:read');
  });
});

/** Pets of category 80: their export (about 3 MB) outlasts what the sockets between service and test buffer. */
const BIG = 10_000;
/** The sessions reading an export: its cursor's statement, suspended between fetches. */
const EXPORT_SESSIONS = "FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%($3::bigint[] IS NULL OR id = ANY%' AND pid <> pg_backend_pid()";
const exportSessions = async () => Number((await t.pool.query<{ n: string }>(`SELECT count(*) AS n ${EXPORT_SESSIONS}`)).rows[0]?.n);

describe('exportPets reads one snapshot', () => {
  beforeAll(async () => {
    await t.pool.query(`INSERT INTO pets (name, category_id, status) SELECT 'Snapshot ' || i || ' ' || repeat('x', 80), 80, 'available' FROM generate_series(1, ${BIG}) AS i`);
  });

  it('pets stored while an export is being read are not in it; the next export has them', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const text = await new Promise<string>((resolve, reject) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/v1/pets:export?categoryId=80', headers: { ...t.auth, accept: 'application/x-ndjson' } }, (response) => {
        expect(response.statusCode).toBe(200);
        // Read the first chunk, then pause and store more pets of the category before reading on.
        let body = '';
        let stored = false;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
          if (stored) return;
          stored = true;
          response.pause();
          const late = Array.from({ length: 5 }, (_, i) => ({ name: `Late ${i}`, categoryId: 80 }));
          exportSessions()
            .then((reading) => {
              // The export is still reading its rows (not all buffered on the way already).
              expect(reading).toBe(1);
              return t.app.inject({ method: 'POST', url: '/v1/pets:batchCreate', headers: { ...t.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ requests: late }) });
            })
            .then((made) => {
              expect(made.statusCode).toBe(200);
              // The pets are stored and committed: a new export sees them.
              return t.app.inject({ method: 'GET', url: '/v1/pets:export?categoryId=80', headers: { ...t.auth, accept: 'application/x-ndjson' } });
            })
            .then((seen) => {
              expect(seen.body.split('\n').filter((line) => line.includes('"Late '))).toHaveLength(5);
              response.resume();
            }, reject);
        });
        response.on('end', () => resolve(body));
        response.on('error', reject);
      });
      request.on('error', reject);
    });
    const names = text.slice(0, -1).split('\n').map((l) => (JSON.parse(l) as { name: string }).name);
    expect(names).toHaveLength(BIG);
    expect(names.some((n) => n.startsWith('Late'))).toBe(false);
    const after = await exported('?categoryId=80', 'application/x-ndjson');
    expect(after.body.slice(0, -1).split('\n')).toHaveLength(BIG + 5);
  });

  it('at most half the pool exports at once (2 of 5 here): one more is 503 with Retry-After, and the two finish', async () => {
    // The two exports' reads wait behind a lock on pets, holding their connections.
    const locker = new pg.Client({ connectionString: t.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
    let running: Promise<{ statusCode: number; body: string }>[] = [];
    try {
      running = [1, 2].map(() => t.app.inject({ method: 'GET', url: '/v1/pets:export?categoryId=70', headers: { ...t.auth, accept: 'application/x-ndjson' } }));
      const waiting = async () => Number((await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%pet_json%'")).rows[0]?.n);
      await within(WAIT_MS, async () => (await waiting()) >= 2);
      const refused = await exported('?categoryId=70', 'application/x-ndjson');
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json()).toEqual({ code: 'unavailable', message: '2 exports are running on this instance, the most it runs at once: retry later', status: 503 });
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    for (const done of await Promise.all(running)) {
      expect(done.statusCode).toBe(200);
      expect(done.body.split('\n').filter(Boolean)).toHaveLength(3);
    }
    expect((await exported('?categoryId=70', 'application/x-ndjson')).statusCode).toBe(200);
  });

  it("an export that outlasts the pool's statement timeout is answered whole", async () => {
    // A service whose statements may run 100 ms, read by a client that takes 10 pauses of 150 ms.
    const strictPool = createPool({ DATABASE_URL: t.url, DB_POOL_MAX: 5, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 100 });
    const strict = await buildTestApp({ url: t.url, pool: strictPool, env: { RATE_LIMIT_MAX: '100000' } });
    try {
      await strict.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = strict.app.server.address() as AddressInfo;
      const lines = await new Promise<number>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/v1/pets:export?categoryId=80', headers: { ...t.auth, accept: 'application/x-ndjson' } }, (response) => {
            expect(response.statusCode).toBe(200);
            let count = 0;
            let pauses = 0;
            response.on('data', (chunk: Buffer) => {
              for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) count++;
              if (pauses++ >= 10) return;
              response.pause();
              setTimeout(() => response.resume(), 150);
            });
            response.on('end', () => resolve(count));
            response.on('error', reject);
          })
          .on('error', reject);
      });
      expect(lines).toBe(BIG + 5);
    } finally {
      await strict.close();
      await closePool(strictPool);
    }
  });

  it('an export whose text moves nothing for EXPORT_IDLE_TIMEOUT_MS is cut off and gives its connection back', async () => {
    // Nothing moves: its statement waits behind a lock on pets (as a client that stops
    // reading stops it, once the buffers between are full).
    const idle = await buildTestApp({ url: t.url, env: { RATE_LIMIT_MAX: '100000', EXPORT_IDLE_TIMEOUT_MS: '1000' } });
    const locker = new pg.Client({ connectionString: t.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
      const answer = await idle.app.inject({ method: 'GET', url: '/v1/pets:export?categoryId=80', headers: { ...t.auth, accept: 'application/x-ndjson' } });
      // Cut off while the lock is still held, before its first byte: 503, retry.
      expect(answer.statusCode).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.json()).toEqual({ code: 'unavailable', message: 'The export moved nothing for 1000 ms: retry later', status: 503 });
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    try {
      // Its session ends, and the app's connections all come back (its jobs waited for the lock too).
      await within(WAIT_MS, async () => (await exportSessions()) === 0);
      await within(WAIT_MS, async () => idle.pool.totalCount - idle.pool.idleCount === 0);
    } finally {
      await idle.close();
    }
  });

  it('an export ended early (HEAD, a client gone) gives its connection back at once, not when its fetch in flight ends', async () => {
    // The exports' fetches wait behind a lock on pets; four HEADs, one after the other.
    const locker = new pg.Client({ connectionString: t.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
      for (let i = 0; i < 4; i++) {
        const response = await t.api({ method: 'HEAD', url: '/v1/pets:export?categoryId=70', headers: t.auth });
        expect(response.statusCode).toBe(200);
      }
      // None of the four still holds a connection of the pool (5; a job may wait for the lock too).
      expect(t.pool.totalCount - t.pool.idleCount).toBeLessThan(4);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    await within(WAIT_MS, async () => (await exportSessions()) === 0);
  });

  it('an export the client abandons gives its connection back: the next exports are answered', async () => {
    const { port } = t.app.server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/v1/pets:export?categoryId=80', headers: t.auth }, (response) => {
        response.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.on('error', (error) => ((error as { code?: string }).code === 'ECONNRESET' ? undefined : reject(error)));
    });
    // Its connection goes back (destroyed, and then not counted by the pool), and its place
    // among the exports running at once too: two at once are answered again.
    await within(WAIT_MS, async () => t.pool.totalCount - t.pool.idleCount === 0);
    await within(WAIT_MS, async () => (await Promise.all([1, 2].map(() => exported('?categoryId=70', 'application/x-ndjson')))).every((r) => r.statusCode === 200));
    // More exports than the pool has connections (5), one after the other.
    for (let i = 0; i < 8; i++) {
      const response = await exported('?categoryId=70', 'application/x-ndjson');
      expect(response.statusCode).toBe(200);
    }
    await within(WAIT_MS, async () => t.pool.totalCount - t.pool.idleCount === 0);
  });
});
