// Imports (createPetImport, getPetImport, listPetImports, cancelPetImport): a CSV or NDJSON
// body stored whole, answered 202, then read and added by the worker; every bad input is a
// 4xx at submission or a row error that says what to fix, and under errorPolicy=stop the
// catalogue is exactly as it was. The worker's survival of a killed instance is
// test/e2e/import-crash.test.ts; the limit passed mid-body, over a socket, is at the end.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, createPool } from '../../src/db/pool.js';
import { buildTestApp, createApiKey, createTestDatabase, type TestApp } from '../helper.js';
import { within, WAIT_MS } from '../process.js';
import { listen, type ListeningApp } from '../support/wire.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '100000', IMPORT_BATCH_ROWS: '10', IMPORT_POLL_MS: '100' } });
});
afterAll(async () => t.close());

interface PetImport {
  id: number;
  status: string;
  rowsRead: number;
  rowsImported: number;
  rowsRefused: number;
  errors: { line: number; field: string; message: string }[];
  message?: string;
  dryRun: boolean;
  errorPolicy: string;
}

const submit = (body: string | Buffer, options: { type?: string; query?: string } = {}) =>
  t.api({ method: 'POST', url: `/v1/pet-imports${options.query ?? ''}`, headers: { ...t.auth, 'content-type': options.type ?? 'text/csv' }, payload: body });

/** The import once it has ended, read through getPetImport. */
async function ended(id: number): Promise<PetImport> {
  let last: PetImport | undefined;
  await within(WAIT_MS, async () => {
    const response = await t.api({ method: 'GET', url: `/v1/pet-imports/${id}`, headers: t.auth });
    expect(response.statusCode).toBe(200);
    last = response.json<PetImport>();
    return ['succeeded', 'failed', 'cancelled'].includes(last.status);
  });
  return last as PetImport;
}

/** Submits, expects 202 with Location, and waits for the end. */
async function imported(body: string | Buffer, options: { type?: string; query?: string } = {}): Promise<PetImport> {
  const response = await submit(body, options);
  expect(response.statusCode, response.body).toBe(202);
  const queued = response.json<PetImport>();
  expect(response.headers.location).toBe(`/v1/pet-imports/${queued.id}`);
  expect(queued.status).toBe('queued');
  return ended(queued.id);
}

/** The live pets of a category, as the API lists them (names, in id order). */
async function namesIn(categoryId: number): Promise<string[]> {
  const response = await t.api({ method: 'GET', url: `/v1/pets?categoryId=${categoryId}&limit=100`, headers: t.auth });
  expect(response.statusCode).toBe(200);
  return response.json<{ name: string }[]>().map((p) => p.name);
}

describe('a CSV import', () => {
  it('adds the valid rows in file order, names the refused ones by line and field (skip), and the feed has a pet.created for each, then import.finished', async () => {
    const before = await t.api({ method: 'GET', url: '/v1/events?limit=1', headers: t.auth });
    const body = ['status,name,categoryId', 'available,Rex,101', ',"Tom, the cat",101', 'sold,Bad,x', 'pending,,101', 'lost,Odd,101', 'available,Zoé 🐦,101'].join('\r\n');
    const done = await imported(body, { query: '?errorPolicy=skip' });
    expect(done).toMatchObject({ status: 'succeeded', rowsRead: 6, rowsImported: 3, rowsRefused: 3 });
    expect(done.errors).toEqual([
      { line: 4, field: 'categoryId', message: "must be an integer in plain decimal digits (the category's id)" },
      { line: 5, field: 'name', message: 'must NOT have fewer than 1 characters' },
      { line: 6, field: 'status', message: 'must be equal to one of the allowed values: available, pending, sold' },
    ]);
    expect(await namesIn(101)).toEqual(['Rex', 'Tom, the cat', 'Zoé 🐦']);
    const events = await t.api({ method: 'GET', url: `/v1/events?limit=100&cursor=${encodeURIComponent(/cursor=([^&>]+)/.exec(String(before.headers.link))?.[1] ?? '')}`, headers: t.auth });
    const types = events.json<{ type: string; data: { name?: string; id: number } }[]>().filter((e) => e.type === 'import.finished' || e.data.name !== undefined);
    expect(types.slice(-4).map((e) => [e.type, e.data.name ?? e.data.id])).toEqual([
      ['pet.created', 'Rex'],
      ['pet.created', 'Tom, the cat'],
      ['pet.created', 'Zoé 🐦'],
      ['import.finished', done.id],
    ]);
  });

  it('a byte order mark, LF line ends, quoted commas, quotes and line ends in a field, an empty line: read as RFC 4180 says', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name,categoryId\n"A, with comma",102\n\n"Say ""hi""",102\nPlain,102\n')]);
    const done = await imported(body);
    expect(done).toMatchObject({ status: 'succeeded', rowsRead: 3, rowsImported: 3, rowsRefused: 0 });
    expect(await namesIn(102)).toEqual(['A, with comma', 'Say "hi"', 'Plain']);
  });

  it('a line end in a name, a ragged row, a name too long: row errors that say what to fix (skip), lines counted across the quoted line end', async () => {
    const body = ['name,categoryId', '"Two', 'lines",103', 'Extra,103,field', `${'x'.repeat(101)},103`, 'Fine,103'].join('\r\n');
    const done = await imported(body, { query: '?errorPolicy=skip' });
    expect(done.errors).toEqual([
      { line: 2, field: 'name', message: expect.stringMatching(/^must be free of control characters .*: character 4 is U\+000D; remove it$/) },
      { line: 4, field: '', message: 'has 3 fields where the header names 2: give each row one field per column, quoting a field that holds a comma' },
      { line: 5, field: 'name', message: 'must NOT have more than 100 characters' },
    ]);
    expect(done).toMatchObject({ status: 'succeeded', rowsRead: 4, rowsImported: 1, rowsRefused: 3 });
    expect(await namesIn(103)).toEqual(['Fine']);
  });

  it('errorPolicy=stop (the default): the first bad row fails the import, naming it, and the catalogue is exactly as it was', async () => {
    const rows = Array.from({ length: 25 }, (_, i) => `Stop ${i},104`);
    rows[17] = 'Stop 17,not-a-number';
    const done = await imported(['name,categoryId', ...rows].join('\n'));
    expect(done).toMatchObject({ status: 'failed', errorPolicy: 'stop', rowsImported: 0, rowsRefused: 1, rowsRead: 18 });
    expect(done.errors).toEqual([{ line: 19, field: 'categoryId', message: "must be an integer in plain decimal digits (the category's id)" }]);
    expect(done.message).toBe('Line 19 was refused and errorPolicy is stop: no animal was added; fix the row (errors says how), or import with errorPolicy=skip');
    expect(await namesIn(104)).toEqual([]);
  });

  it('an unclosed quote fails the import at its line, in either policy; under stop, nothing is added', async () => {
    const body = 'name,categoryId\nFine,105\n"Open,105\nMore,105\n';
    const stop = await imported(body);
    expect(stop.status).toBe('failed');
    expect(stop.message).toBe('Line 3: a quoted field is not closed before the end of the file: close its quote (a quote inside a quoted field is written twice). No animal was added.');
    expect(await namesIn(105)).toEqual([]);
    const skip = await imported(body, { query: '?errorPolicy=skip' });
    expect(skip.status).toBe('failed');
    expect(skip.message).toMatch(/^Line 3: a quoted field is not closed.*The animals of the rows before it were added\.$/);
    expect(await namesIn(105)).toEqual(['Fine']);
  });

  it('a stop import of many batches adds every row once (it validates the whole file first)', async () => {
    const names = Array.from({ length: 95 }, (_, i) => `Batch ${String(i).padStart(2, '0')}`);
    const done = await imported(['name,categoryId,status', ...names.map((n) => `${n},106,available`)].join('\r\n'));
    expect(done).toMatchObject({ status: 'succeeded', rowsRead: 95, rowsImported: 95, rowsRefused: 0 });
    const { rows } = await t.pool.query<{ name: string }>('SELECT name FROM pets WHERE category_id = 106 ORDER BY id');
    expect(rows.map((r) => r.name)).toEqual(names);
  });

  it('a row the database refuses (a check of its own) fails the import, naming the lines of its batch; the batches before it stay', async () => {
    await t.pool.query("ALTER TABLE pets ADD CONSTRAINT test_refused_name CHECK (name <> 'Refused by the database') NOT VALID");
    try {
      const names = Array.from({ length: 15 }, (_, i) => (i === 12 ? 'Refused by the database' : `Checked ${i}`));
      const done = await imported(['name,categoryId', ...names.map((n) => `${n},111`)].join('\n'), { query: '?errorPolicy=skip' });
      expect(done).toMatchObject({ status: 'failed', rowsImported: 10 });
      expect(done.message).toBe('The database refused a row among lines 12 to 16 (SQLSTATE 23514); the rows before them were added. Fix that row, and import the rows from line 12 on');
      expect(await namesIn(111)).toEqual(names.slice(0, 10));
    } finally {
      await t.pool.query('ALTER TABLE pets DROP CONSTRAINT test_refused_name');
    }
  });

  it('dryRun=true checks every row and adds none', async () => {
    const done = await imported('name,categoryId\nDry,107\nAlso dry,107\n,107\n', { query: '?dryRun=true&errorPolicy=skip' });
    expect(done).toMatchObject({ status: 'succeeded', dryRun: true, rowsRead: 3, rowsImported: 0, rowsRefused: 1 });
    expect(await namesIn(107)).toEqual([]);
  });
});

describe('an NDJSON import', () => {
  it('one NewPet per line, empty lines skipped; a line that is not JSON, or not a NewPet, is refused by line (skip)', async () => {
    const body = ['{"name":"Nd one","categoryId":108}', '', '{"name":"Nd two","categoryId":108,"status":"sold"}', 'not json', '[1]', '{"name":"Nd","categoryId":108,"colour":"red"}', '{"name":"Nd three","categoryId":108}'].join('\r\n');
    const done = await imported(body, { type: 'application/x-ndjson', query: '?errorPolicy=skip' });
    expect(done).toMatchObject({ status: 'succeeded', rowsRead: 6, rowsImported: 3, rowsRefused: 3 });
    expect(done.errors).toEqual([
      { line: 4, field: '', message: 'is not JSON: write one NewPet as a JSON object on each line' },
      { line: 5, field: '', message: 'is not a JSON object: write one NewPet as a JSON object on each line' },
      { line: 6, field: 'colour', message: "must NOT have the unknown property 'colour'" },
    ]);
    expect(await namesIn(108)).toEqual(['Nd one', 'Nd two', 'Nd three']);
  });
});

describe('rows that cannot be read as written', () => {
  it('an NDJSON line longer than 64 KiB is refused by its line, its bytes never held whole; a lone surrogate or U+0000 is refused as createPet refuses it', async () => {
    const body = [
      '{"name":"Before","categoryId":112}',
      `{"name":"${'x'.repeat(200_000)}","categoryId":112}`,
      '{"name":"\\ud800","categoryId":112}',
      '{"name":"Nul","categoryId":112,"\\u0000":1}',
      '{"name":"After","categoryId":112}',
    ].join('\n');
    const done = await imported(body, { type: 'application/x-ndjson', query: '?errorPolicy=skip' });
    expect(done.errors).toEqual([
      { line: 2, field: '', message: 'is longer than 65536 bytes: a NewPet takes a few hundred' },
      { line: 3, field: 'name', message: 'must be well-formed Unicode without U+0000 (a \\u escape leaves a lone surrogate, or writes U+0000)' },
      { line: 4, field: '\uFFFD', message: 'must be well-formed Unicode without U+0000 (a \\u escape leaves a lone surrogate, or writes U+0000)' },
    ]);
    expect(done).toMatchObject({ status: 'succeeded', rowsRead: 5, rowsImported: 2, rowsRefused: 3 });
    expect(await namesIn(112)).toEqual(['Before', 'After']);
  });

  it('an NDJSON line nested 10,000 deep, or with a number JSON.parse rounds, is refused by its line as createPet refuses it; the import ends, and the next one runs', async () => {
    const body = [
      '{"name":"First","categoryId":115}',
      `{"name":"Deep","categoryId":115,"z":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
      '{"name":"Rounded","categoryId":9007199254740990.9999}',
      '{"name":"Four","categoryId":4.00000000000000001}',
      '{"name":"Twice","name":"Again","categoryId":4.00000000000000001}',
      '{"name":"Last","categoryId":115}',
    ].join('\n');
    const done = await imported(body, { type: 'application/x-ndjson', query: '?errorPolicy=skip' });
    expect(done.errors).toEqual([
      { line: 2, field: '', message: 'nests arrays or objects more than 64 levels deep: a NewPet needs 2' },
      { line: 3, field: 'categoryId', message: 'must be a number held exactly: 9007199254740990.9999 would be rounded' },
      { line: 4, field: 'categoryId', message: 'must be a number held exactly: 4.00000000000000001 would be rounded' },
      { line: 5, field: 'categoryId', message: 'must be a number held exactly: 4.00000000000000001 would be rounded' },
    ]);
    expect(done).toMatchObject({ status: 'succeeded', rowsRead: 6, rowsImported: 2, rowsRefused: 4 });
    expect(await namesIn(115)).toEqual(['First', 'Last']);
    expect(await imported('{"name":"Next","categoryId":116}', { type: 'application/x-ndjson' })).toMatchObject({ status: 'succeeded', rowsImported: 1 });
  });

  it('a later line that ends with CR alone is refused at its line, saying so (a first line that does is 400, below)', async () => {
    const csv = await imported('name,categoryId\nFirst,131\nCrA,131\rCrB,131\n"Quoted\rCR",131,extra\nLast,131\n', { query: '?errorPolicy=skip' });
    expect(csv.errors).toEqual([
      { line: 3, field: '', message: 'holds a CR alone, which ends no line: save the file with CRLF or LF line ends (a CR inside a quoted field is kept)' },
      { line: 4, field: '', message: 'has 3 fields where the header names 2: give each row one field per column, quoting a field that holds a comma' },
    ]);
    const ndjson = await imported('{"name":"First","categoryId":131}\n{"name":"CrA","categoryId":131}\r{"name":"CrB","categoryId":131}\n', { type: 'application/x-ndjson', query: '?errorPolicy=skip' });
    expect(ndjson.errors).toEqual([{ line: 2, field: '', message: 'ends a row with CR alone, which ends no line: save the file with CRLF or LF line ends' }]);
    expect(await namesIn(131)).toEqual(['First', 'Last', 'First']);
  });

  it('an unreadable row with no animal added before it fails the import saying so', async () => {
    for (const body of ['name,categoryId\n"open,132\nLast,132\n', 'name,categoryId\n,132\n"open,132\nLast,132\n']) {
      const done = await imported(body, { query: '?errorPolicy=skip' });
      expect(done).toMatchObject({ status: 'failed', rowsImported: 0 });
      expect(done.message).toMatch(/^Line \d: .* No animal was added\.$/);
    }
  });

  it.each([
    ['a quote inside a field that is not quoted', 'x"y"z,113', 'a field that is not quoted holds a quote: quote the whole field, and write a quote inside it twice'],
    ['a quoted field that goes on after its closing quote', '"Tom, "the cat"",113', 'a quoted field goes on after its closing quote: quote the whole field, and write a quote inside it twice'],
    ['a quoted field longer than 64 KiB', `"${'x'.repeat(70_000)}",113`, 'a row is longer than 65536 bytes (a quote left open runs on to the end of the file): close the quote, or split the row'],
  ])('%s fails the import at its line (never a name with the quotes in it)', async (_, row, words) => {
    const done = await imported(`name,categoryId\nFirst,113\n${row}\nLast,113\n`, { query: '?errorPolicy=skip' });
    expect(done.status).toBe('failed');
    expect(done.message).toBe(`Line 3: ${words}. The animals of the rows before it were added.`);
    expect((await namesIn(113)).filter((n) => n !== 'First')).toEqual([]);
  });
});

describe('a batch the database cannot add: never an import running for ever, nor one holding those behind it', () => {
  // A service of its own: a 1 s statement timeout, batches of 40, and a trigger that makes
  // some rows slow (Slow…: 50 ms each; Slower: 3 s) or refused for no data reason (Boom).
  let slow: TestApp;
  let auth: Record<string, string>;
  const cleanup: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    const database = await createTestDatabase();
    cleanup.push(database.drop);
    const pool = createPool({ DATABASE_URL: database.url, DB_POOL_MAX: 5, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 1000 });
    cleanup.push(() => closePool(pool));
    auth = { authorization: `Bearer ${(await createApiKey(pool)).key}` };
    slow = await buildTestApp({ url: database.url, pool, env: { RATE_LIMIT_MAX: '100000', IMPORT_BATCH_ROWS: '40', IMPORT_POLL_MS: '100' } });
    cleanup.push(() => slow.close());
    await slow.pool.query(`CREATE FUNCTION test_hard_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.name LIKE 'Slow %' THEN PERFORM pg_sleep(0.05); END IF;
        IF NEW.name = 'Slower' THEN PERFORM pg_sleep(3); END IF;
        IF NEW.name = 'Boom' THEN RAISE EXCEPTION 'boom'; END IF;
        RETURN NEW;
      END $$`);
    await slow.pool.query('CREATE TRIGGER test_hard_rows BEFORE INSERT ON pets FOR EACH ROW EXECUTE FUNCTION test_hard_rows()');
  });
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });
  const run = async (rows: string[]) => {
    const response = await slow.api({ method: 'POST', url: '/v1/pet-imports', headers: { ...auth, 'content-type': 'text/csv' }, payload: `name,categoryId\n${rows.join('\n')}\n` });
    expect(response.statusCode, response.body).toBe(202);
    const id = response.json<PetImport>().id;
    let last: PetImport | undefined;
    await within(WAIT_MS, async () => {
      last = (await slow.api({ method: 'GET', url: `/v1/pet-imports/${id}`, headers: auth })).json<PetImport>();
      return ['succeeded', 'failed', 'cancelled'].includes(last.status);
    });
    return last as PetImport;
  };

  it('a batch past the statement timeout is added in smaller batches: every row once', async () => {
    const names = Array.from({ length: 60 }, (_, i) => `Slow ${i}`);
    expect(await run(names.map((n) => `${n},117`))).toMatchObject({ status: 'succeeded', rowsRead: 60, rowsImported: 60 });
    const stored = await slow.pool.query<{ name: string }>('SELECT name FROM pets WHERE category_id = 117 ORDER BY id');
    expect(stored.rows.map((r) => r.name)).toEqual(names);
  });

  it('a row that alone passes the timeout, or that fails the same way at every try, ends its import failed at its line; the next import runs', async () => {
    const namesIn118 = async () => (await slow.pool.query<{ name: string }>('SELECT name FROM pets WHERE category_id = 118 ORDER BY id')).rows.map((r) => r.name);
    expect(await run(['Quick,118', 'Slower,118', 'Never,118'])).toMatchObject({
      status: 'failed',
      message: 'The import could not go on at line 3: it took longer than the database allows a statement (DB_STATEMENT_TIMEOUT_MS) 3 times in a row; the rows before it were added. Import the rows from that line on again',
    });
    expect(await namesIn118()).toEqual(['Quick']);
    expect(await run(['Boom,119', 'Never,119'])).toMatchObject({
      status: 'failed',
      message: "The import could not go on at line 2: it failed (the service's log says why) 3 times in a row; the rows before it were added. Import the rows from that line on again",
    });
    expect(await run(['Next,120'])).toMatchObject({ status: 'succeeded', rowsImported: 1 });
  });
});

describe('what submission refuses (4xx, nothing stored)', () => {
  const countImports = async () => Number((await t.pool.query<{ n: string }>('SELECT count(*) AS n FROM pet_imports')).rows[0]?.n);
  const countParts = async () => Number((await t.pool.query<{ n: string }>('SELECT count(*) AS n FROM pet_import_parts')).rows[0]?.n);

  it.each([
    ['a header without categoryId', 'text/csv', 'name,status\nRex,available\n', 400, 'The header row lacks the column categoryId: name the columns name, categoryId and, if you like, status and tags'],
    ['an unknown column', 'text/csv', 'name,categoryId,colour\nRex,1,red\n', 400, 'The header row names the column "colour", which an import does not take: the columns are name, categoryId, status and tags'],
    ['a column in another case, or with a space', 'text/csv', 'Name, categoryId\n', 400, 'The header row names the column "Name": write it name, as it is spelt here (column names are exact: case and spaces count)'],
    ['lines that end with CR alone', 'text/csv', 'name,categoryId\rRex,1\rTom,2\r', 400, 'The lines end with CR alone: save the file with CRLF or LF line ends'],
    ['NDJSON lines that end with CR alone', 'application/x-ndjson', '{"name":"N1","categoryId":1}\r{"name":"N2","categoryId":1}\r', 400, 'The lines end with CR alone: save the file with CRLF or LF line ends'],
    ['NDJSON after more than 64 KiB of empty lines, sent at once', 'application/x-ndjson', `${'\n'.repeat(70_000)}{"name":"N1","categoryId":1}\n`, 400, 'Body starts with more than 65536 bytes of white space: send one NewPet as a JSON object per line'],
    ['NDJSON after more than 64 KiB of blank lines and spaces, sent at once', 'application/x-ndjson', `${' \r\n\t'.repeat(17_000)}{"name":"N1","categoryId":1}\n`, 400, 'Body starts with more than 65536 bytes of white space: send one NewPet as a JSON object per line'],
    ['NDJSON lines that end with CR alone after blank lines', 'application/x-ndjson', '\n \n{"name":"N1","categoryId":1}\r{"name":"N2","categoryId":1}\r', 400, 'The lines end with CR alone: save the file with CRLF or LF line ends'],
    ['an NDJSON body of white space and a byte order mark', 'application/x-ndjson', Buffer.from([0xef, 0xbb, 0xbf, 0x20, 0x0a, 0x0d, 0x0a]), 400, 'Body is empty: send one NewPet as a JSON object per line'],
    ['no body at all', 'text/csv', undefined, 400, 'body: a body is required (text/csv or application/x-ndjson)'],
    ['a column named twice', 'text/csv', 'name,categoryId,name\n', 400, 'The header row names the column name twice: name each column once'],
    ['an id column (an export as it is)', 'text/csv', 'id,name,categoryId,status\n1,Rex,1,\n', 400, 'The header row names the column id: the service assigns ids, so remove the column (an export imports once its id column is removed)'],
    ['an empty CSV body', 'text/csv', '', 400, 'Body is empty or starts with an empty line: the first line must name the columns name, categoryId and, if you like, status and tags'],
    ['an empty NDJSON body', 'application/x-ndjson', '\n\n', 400, 'Body is empty: send one NewPet as a JSON object per line'],
    ['bytes that are not UTF-8', 'text/csv', Buffer.from([...Buffer.from('name,categoryId\nR'), 0xff, ...Buffer.from('x,1\n')]), 400, 'Body is not valid UTF-8 (in its bytes 0 to 21): save the file as UTF-8 and send it again'],
    ['a JSON body', 'application/json', '{"name":"Rex","categoryId":1}', 415, 'Content-Type must be text/csv or application/x-ndjson'],
    ['a charset other than UTF-8', 'text/csv; charset=latin1', 'name,categoryId\n', 415, 'Content-Type charset must be utf-8'],
  ])('%s: %i', async (_, type, body, status, message) => {
    const [imports, parts] = [await countImports(), await countParts()];
    const response = body === undefined ? await t.api({ method: 'POST', url: '/v1/pet-imports', headers: t.auth }) : await submit(body, { type });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({ message, status });
    expect([await countImports(), await countParts()]).toEqual([imports, parts]);
  });

  it('a key without pets:write: 403 before the body is read', async () => {
    const made = await t.api({ method: 'POST', url: '/v1/api-keys', headers: { ...t.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'reader', scopes: ['pets:read'] }) });
    const response = await t.api({ method: 'POST', url: '/v1/pet-imports', headers: { authorization: `Bearer ${made.json<{ secret: string }>().secret}`, 'content-type': 'text/csv' }, payload: 'name,categoryId\n' });
    expect(response.statusCode).toBe(403);
  });
});

describe('getPetImport, listPetImports, cancelPetImport', () => {
  // pg_locks lists the whole cluster's locks, and the files' databases are copies of one
  // template (the same oids): only this file's database counts.
  const thisDatabase = 'database = (SELECT oid FROM pg_database WHERE datname = current_database())';
  it('a cancel waits for the batch in flight, which is added whole; no later batch is; the import ends cancelled, and cancelling again is 409', async () => {
    const client = await t.pool.connect();
    try {
      // Holds back the first batch's insert, after the worker has locked the import's row.
      await client.query('BEGIN');
      await client.query('LOCK TABLE pets IN SHARE MODE');
      const response = await submit(['name,categoryId', ...Array.from({ length: 50 }, (_, i) => `Cancel ${i},109`)].join('\n'), { query: '?errorPolicy=skip' });
      expect(response.statusCode).toBe(202);
      const { id } = response.json<PetImport>();
      await within(WAIT_MS, async () => (await t.pool.query(`SELECT 1 FROM pg_locks WHERE ${thisDatabase} AND relation = 'pets'::regclass AND NOT granted`)).rowCount === 1);
      const cancelling = t.api({ method: 'POST', url: `/v1/pet-imports/${id}/cancel`, headers: t.auth });
      await within(WAIT_MS, async () => (await t.pool.query(`SELECT 1 FROM pg_locks WHERE ${thisDatabase} AND locktype = 'advisory' AND NOT granted`)).rowCount === 1);
      await client.query('COMMIT');
      const cancelled = await cancelling;
      expect(cancelled.statusCode).toBe(200);
      expect(cancelled.json()).toMatchObject({ id, status: 'cancelled', rowsImported: 10 });
      expect(await ended(id)).toMatchObject({ status: 'cancelled', rowsImported: 10 });
      expect(await namesIn(109)).toEqual(Array.from({ length: 10 }, (_, i) => `Cancel ${i}`));
      const again = await t.api({ method: 'POST', url: `/v1/pet-imports/${id}/cancel`, headers: t.auth });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toMatchObject({ code: 'import_finished', message: `Import ${id} has ended (cancelled): there is nothing to cancel` });
      expect((await t.pool.query('SELECT 1 FROM pet_import_parts p JOIN pet_imports i USING (upload_id) WHERE i.id = $1', [id])).rowCount).toBe(0);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }
  });

  it('an unknown import is 404 to get and to cancel', async () => {
    for (const [method, url] of [['GET', '/v1/pet-imports/999999'], ['POST', '/v1/pet-imports/999999/cancel']] as const) {
      const response = await t.api({ method, url, headers: t.auth });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 'not_found', message: 'Import 999999 does not exist' });
    }
  });

  it('listPetImports: every import once, in id order, page after page', async () => {
    for (let i = 0; i < 4; i++) expect((await submit('name,categoryId\nListed,110\n', { query: '?dryRun=true' })).statusCode).toBe(202);
    const { rows } = await t.pool.query<{ id: string }>('SELECT id FROM pet_imports ORDER BY id');
    const seen: number[] = [];
    let url: string | undefined = '/v1/pet-imports?limit=3';
    while (url) {
      const response = await t.api({ method: 'GET', url, headers: t.auth });
      expect(response.statusCode).toBe(200);
      seen.push(...response.json<PetImport[]>().map((i) => i.id));
      url = /<([^>]+)>; rel="next"/.exec(String(response.headers.link ?? ''))?.[1];
    }
    expect(seen).toEqual(rows.map((r) => Number(r.id)));
    expect(seen.length).toBeGreaterThan(4);
  });
});

describe('the body limit, over a socket', () => {
  let w: ListeningApp;
  beforeAll(async () => {
    w = await listen({ env: { IMPORT_MAX_BYTES: '4096' } });
  });
  afterAll(async () => w.close());

  it('a chunked body that passes IMPORT_MAX_BYTES is 413 as soon as it does, while the client is still sending; the connection closes; nothing is stored', async () => {
    const socket = net.connect(w.port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
    socket.write(`POST /v1/pet-imports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.key}\r\nContent-Type: text/csv\r\nTransfer-Encoding: chunked\r\n\r\n`);
    socket.write(chunk(`name,categoryId\n${'Big,1\n'.repeat(700)}`));
    // More than the limit has been sent, and the body is not over: the answer comes now.
    await within(WAIT_MS, async () => text.includes('\r\n\r\n'));
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(text).toContain('Request body is larger than 4096 bytes: split the file, and import each part');
    await closed;
    expect((await w.pool.query('SELECT count(*)::int AS n FROM pet_import_parts')).rows[0]).toEqual({ n: 0 });
  });

  it.each([
    ['an unknown key', 'Bearer sk_unknown', 'text/csv', 401],
    ['a body the operation does not read', undefined, 'text/plain', 415],
  ])('%s, answered while the body is still arriving: the connection closes, the rest is not read', async (_, authorization, type, status) => {
    const socket = net.connect(w.port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(`POST /v1/pet-imports HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization ?? `Bearer ${w.key}`}\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\n\r\n`);
    socket.write('6\r\nname,c\r\n');
    await within(WAIT_MS, async () => text.includes('\r\n\r\n'));
    expect(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1])).toBe(status);
    expect(text.toLowerCase()).toContain('connection: close');
    await closed;
  });
});
