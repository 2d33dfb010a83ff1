// The word index behind listPets' `q` (docs/decisions/0011-pet-search.md): pet_terms holds
// exactly the terms of live pets after every kind of statement that writes pets, several
// pets to a statement as the coalesced writers send them (src/db/coalesce.ts), and pets.terms
// is search_words of the name and tags, as `q` is folded, under any search_path. What a
// search then finds is tested through the API (test/api/listPets-search.test.ts).
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase } from '../helper.js';

let db: { url: string; drop: () => Promise<void> };
let client: pg.Client;
beforeAll(async () => {
  db = await createTestDatabase();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query("INSERT INTO categories (id, name) VALUES (1, 'Dogs') ON CONFLICT DO NOTHING");
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** pet_terms' rows, and the rows live pets' terms call for, each as sorted `term:id`. */
async function indexAndExpected(): Promise<{ index: string[]; expected: string[]; missingWords: string[] }> {
  const index = await client.query<{ row: string }>("SELECT term || ':' || pet_id AS row FROM pet_terms ORDER BY 1");
  const expected = await client.query<{ row: string }>(
    "SELECT DISTINCT t || ':' || id AS row FROM pets CROSS JOIN unnest(terms) AS t WHERE deleted_at IS NULL ORDER BY 1",
  );
  const missing = await client.query<{ term: string }>(
    "SELECT DISTINCT term FROM pet_terms p WHERE term !~ '^[0-9]+$' AND NOT EXISTS (SELECT FROM search_vocabulary v WHERE v.term = p.term) ORDER BY 1",
  );
  return { index: index.rows.map((r) => r.row), expected: expected.rows.map((r) => r.row), missingWords: missing.rows.map((r) => r.term) };
}

async function expectIndexExact(): Promise<void> {
  const { index, expected, missingWords } = await indexAndExpected();
  expect(index).toEqual(expected);
  expect(missingWords).toEqual([]);
}

/** Several pets in one statement, as createPet's coalesced batches are written. */
const insert = (names: string[], tags: (string[] | null)[]) =>
  client.query<{ id: string }>(
    `INSERT INTO pets (name, category_id, status, tags, created_json)
     SELECT n, 1, 'available', CASE WHEN j IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text(j::json)) END, json_instant(now())
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS a(n, j, i) ORDER BY i RETURNING id`,
    [names, tags.map((t) => (t ? JSON.stringify(t) : null))],
  );

it('pets.terms is search_words of the name and the tags, folded as q is', async () => {
  const cases: [string, string[] | null][] = [
    ['Zoé Müller', null],
    ['Straße', ['good-with-kids']],
    ['100% lab_mix', ['Hypo Allergenic', 'ÉTÉ']],
    ['  --  ', null],
    ['Rex 2', []],
    ['Zed© Bo½ № Rene\u0301e', null],
  ];
  for (const [name, tags] of cases) {
    const { rows } = await client.query<{ same: boolean; terms: string[] }>(
      "SELECT pet_terms_of($1, $2::text[]) IS NOT DISTINCT FROM search_words($1 || ' ' || coalesce(array_to_string($2::text[], ' '), '')) AS same, pet_terms_of($1, $2::text[]) AS terms",
      [name, tags],
    );
    expect(rows[0]?.same, `${name} ${JSON.stringify(tags)}: ${JSON.stringify(rows[0]?.terms)}`).toBe(true);
  }
  const { rows } = await client.query<{ terms: string[] }>("SELECT pet_terms_of('Zoé Straße', ARRAY['good-with-kids']) AS terms");
  expect(rows[0]?.terms).toEqual(['zoe', 'strasse', 'good', 'with', 'kids']);
  // A symbol separates words before accents are removed: unaccent would make `©` the word
  // `c`, `½` the words `1` and `2`, `№` the word `no`. A combining accent stays in its word.
  const symbols = await client.query<{ terms: string[] }>("SELECT pet_terms_of(E'Zed\u00A9 Bo\u00BD \u2116 Rene\u0301e', NULL) AS terms");
  expect(symbols.rows[0]?.terms).toEqual(['zed', 'bo', 'renee']);
});

it('a q is searched by its first 8 distinct words, however the locale splits it (listPets refuses more by its own count)', async () => {
  const { rows } = await client.query<{ words: string[] }>("SELECT search_query('a b a c d e f g h i j') AS words");
  expect(rows[0]?.words).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
});

it('pets.terms is computed under an empty search_path, as pg_restore copies pets', async () => {
  // A connection of its own: plans made under the usual search_path are not reused.
  const restore = new pg.Client({ connectionString: db.url });
  await restore.connect();
  try {
    const { rows: where } = await restore.query<{ schema: string }>('SELECT current_schema() AS schema');
    await restore.query("SELECT pg_catalog.set_config('search_path', '', false)");
    const { rows } = await restore.query<{ terms: string[] }>(`SELECT ${pg.escapeIdentifier(where[0]?.schema ?? 'public')}.pet_terms_of('Zoé Labrador', ARRAY['calm']) AS terms`);
    expect(rows[0]?.terms).toEqual(['zoe', 'labrador', 'calm']);
  } finally {
    await restore.end();
  }
});

it('pet_terms holds exactly the live pets terms after each kind of statement, several pets to a statement', async () => {
  const created = await insert(['Rex Labrador', 'Zoé Poodle', 'Bella Beagle', 'Max Husky'], [null, ['calm'], ['good-with-kids', 'calm'], null]);
  const [rex, zoe, bella, max] = created.rows.map((r) => Number(r.id));
  await expectIndexExact();
  // A pet inserted removed holds no terms (no service statement does this; a hand-written one may).
  await client.query(
    "INSERT INTO pets (name, category_id, status, created_json, deleted_at) VALUES ('Ghost Whippet', 1, 'available', json_instant(now()), now()), ('Lucky Whippet', 1, 'available', json_instant(now()), NULL)",
  );
  await expectIndexExact();

  // One statement: a rename, a retag, a name and tags at once, and a status change alone.
  await client.query(
    `UPDATE pets SET name = u.name, tags = u.tags, status = u.status
       FROM (VALUES ($1::bigint, 'Rex Labradoodle', NULL::text[], 'available'), ($2, 'Zoé Poodle', ARRAY['shy'], 'available'),
                    ($3, 'Belle Collie', ARRAY['calm'], 'available'), ($4, 'Max Husky', NULL, 'sold')) AS u(id, name, tags, status)
      WHERE pets.id = u.id`,
    [rex, zoe, bella, max],
  );
  await expectIndexExact();
  const { rows: words } = await client.query<{ term: string }>("SELECT term FROM search_vocabulary WHERE term IN ('labradoodle', 'shy', 'belle', 'collie')");
  expect(new Set(words.map((r) => r.term))).toEqual(new Set(['labradoodle', 'shy', 'belle', 'collie']));

  // Two removals in one statement, then one pet brought back by hand.
  await client.query('UPDATE pets SET deleted_at = now() WHERE id = ANY ($1::bigint[])', [[rex, zoe]]);
  await expectIndexExact();
  const { rows: gone } = await client.query('SELECT 1 FROM pet_terms WHERE pet_id = ANY ($1::bigint[])', [[rex, zoe]]);
  expect(gone).toEqual([]);
  await client.query('UPDATE pets SET deleted_at = NULL, name = $2 WHERE id = $1', [zoe, 'Zoé Pug']);
  await expectIndexExact();

  // A statement that changes nothing a search reads writes nothing to the index.
  const before = await indexAndExpected();
  await client.query("UPDATE pets SET status = 'pending' WHERE id = ANY ($1::bigint[])", [[bella, max]]);
  expect((await indexAndExpected()).index).toEqual(before.index);
});

it('pet_terms follows pets deleted, renumbered and truncated by hand (no service statement does)', async () => {
  const created = await insert(['Odin Malinois', 'Freya Samoyed', 'Loki Basenji'], [['calm'], null, ['shy']]);
  const [odin, freya, loki] = created.rows.map((r) => Number(r.id)) as [number, number, number];
  await client.query('DELETE FROM pets WHERE id = ANY ($1::bigint[])', [[odin, freya]]);
  await expectIndexExact();
  const { rows: gone } = await client.query('SELECT 1 FROM pet_terms WHERE pet_id = ANY ($1::bigint[])', [[odin, freya]]);
  expect(gone).toEqual([]);

  // A new id: the terms move with the pet, in the statement that moves it.
  const { rows: moved } = await client.query<{ id: string }>('UPDATE pets SET id = $2 WHERE id = $1 RETURNING id', [loki, loki + 1_000_000]);
  expect(Number(moved[0]?.id)).toBe(loki + 1_000_000);
  await expectIndexExact();
  const { rows: terms } = await client.query<{ term: string }>('SELECT term FROM pet_terms WHERE pet_id = $1 ORDER BY term', [loki + 1_000_000]);
  expect(terms.map((r) => r.term)).toEqual(['basenji', 'loki', 'shy']);

  await client.query('TRUNCATE pets CASCADE');
  expect((await client.query('SELECT 1 FROM pet_terms')).rows).toEqual([]);
});

it("search_typos finds every word one edit away that search_class counts a typo, repeated letters and other scripts included", async () => {
  const words = ['tim', 'aab', 'кот', 'aaaa', 'abba', 'luna', 'lunar', 'aabaa', 'abcabc', 'poodle', 'aaaaaaaa', 'mississippi'];
  const alphabet = ['a', 'b', 'o', 'x', 'ж', '7'];
  /** Every word one edit from w: a letter left out, added or changed, two neighbours swapped. */
  const oneEdit = (w: string): string[] => {
    const c = [...w];
    const out = new Set<string>();
    for (let i = 0; i <= c.length; i++) for (const x of alphabet) out.add([...c.slice(0, i), x, ...c.slice(i)].join(''));
    for (let i = 0; i < c.length; i++) {
      out.add([...c.slice(0, i), ...c.slice(i + 1)].join(''));
      for (const x of alphabet) out.add([...c.slice(0, i), x, ...c.slice(i + 1)].join(''));
      if (i + 1 < c.length) out.add([...c.slice(0, i), c[i + 1], c[i], ...c.slice(i + 2)].join(''));
    }
    out.delete(w);
    return [...out];
  };
  const vocabulary = [...new Set(words.flatMap(oneEdit))];
  await client.query('INSERT INTO search_vocabulary (term) SELECT unnest($1::text[])', [vocabulary]);
  for (const w of words) {
    // The contract: every word one letter away matches (a word w begins matches better).
    const { rows: classes } = await client.query<{ term: string; class: number }>('SELECT t AS term, search_class(t, $1) AS class FROM unnest($2::text[]) AS t', [w, oneEdit(w)]);
    expect(classes.filter((r) => r.class < 1).map((r) => r.term), w).toEqual([]);
    const typos = await client.query<{ term: string }>('SELECT term FROM search_typos($1)', [w]);
    const classed = await client.query<{ term: string }>('SELECT DISTINCT term FROM search_vocabulary WHERE search_class(term, $1) = 1', [w]);
    expect(typos.rows.map((r) => r.term).sort(), w).toEqual(classed.rows.map((r) => r.term).sort());
    expect(typos.rows.length, w).toBeGreaterThan(5);
  }
});
