// Search folds and splits words with the database's character classification (its LC_CTYPE,
// or the builtin provider's locale): under the C locale PostgreSQL knows ASCII letters only,
// so a name in another script (Мурка, 中文) has no words and `q` never finds it, and lower()
// leaves it as it is. The embedded PostgreSQL is created with the builtin C.UTF-8 locale
// (src/db/embedded.ts); for a server of your own, docs/production.md says what to create.
import type pg from 'pg';

/** A warning to log when the database classifies letters as ASCII only, else undefined. */
export async function asciiOnlyWords(pool: Pick<pg.Pool, 'query'>): Promise<string | undefined> {
  const { rows } = await pool.query<{ unicode: boolean; ctype: string }>(
    "SELECT 'ж' ~ '^[[:alnum:]]$' AND lower('Ж') = 'ж' AS unicode, datctype AS ctype FROM pg_database WHERE datname = current_database()",
  );
  const row = rows[0];
  if (!row || row.unicode) return undefined;
  return `the database's character classification (LC_CTYPE ${row.ctype}) knows ASCII letters only: q does not find names written in other scripts. Create the database with a Unicode locale (C.UTF-8, en_US.UTF-8, or the builtin provider's C.UTF-8 on PostgreSQL 17 and later); docs/production.md says how`;
}
