// The service warns at start when the database knows ASCII letters only (src/db/locale.ts):
// under the C locale, search finds no name written in another script.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { asciiOnlyWords } from '../../src/db/locale.js';
import { closePool, createTestDatabase, databaseUrl, testPool } from '../helper.js';

const adminUrl = inject('adminUrl');
const cName = `animal_store_c_${randomBytes(4).toString('hex')}`;
let unicode: { url: string; drop: () => Promise<void> };
const admin = new pg.Client({ connectionString: adminUrl });
beforeAll(async () => {
  unicode = await createTestDatabase({ empty: true });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${cName} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`);
});
afterAll(async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${cName} WITH (FORCE)`);
  await admin.end();
  await unicode?.drop();
});

it('warns on a database that knows ASCII letters only, naming its LC_CTYPE, and not on one that knows Unicode', async () => {
  // testPool's, so that closePool waits for their connections to go before the drop.
  const ascii = testPool(databaseUrl(adminUrl, cName), 1);
  const other = testPool(unicode.url, 1);
  try {
    expect(await asciiOnlyWords(ascii)).toMatch(/^the database's character classification \(LC_CTYPE C\) knows ASCII letters only: q does not find names written in other scripts\. /);
    expect(await asciiOnlyWords(other)).toBeUndefined();
  } finally {
    await Promise.all([closePool(ascii), closePool(other)]);
  }
});
