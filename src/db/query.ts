// The one way repositories run SQL. A statement is declared once, with a name and the type
// of its rows, in its table's repository module; rows come back as objects with named
// columns. Every statement is named, so PostgreSQL plans it once per connection (its generic
// plan: src/db/pool.ts). bigint columns are parsed to exact numbers: every table's checks
// keep them below 2^53 (pg's default keeps them as strings).
import pg from 'pg';

/** What runs statements: a pool (each statement its own transaction) or a transaction. */
export type Queryable = Pick<pg.PoolClient, 'query'>;

/** A named statement whose rows are `Row`. */
export interface Statement<Row extends object> {
  readonly name: string;
  readonly text: string;
  /** Never set: ties the statement to the type of its rows. */
  readonly row?: Row;
}

export function statement<Row extends object>(name: string, text: string): Statement<Row> {
  return { name, text };
}

const INT8 = 20;
const exactInt8 = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};

/** Runs `statement` with `values` on `on`; its rows. */
export async function query<Row extends object>(on: Queryable, statement: Statement<Row>, values: readonly unknown[] = []): Promise<Row[]> {
  const result = await on.query<Row & pg.QueryResultRow>({ name: statement.name, text: statement.text, values: values as unknown[], types: exactInt8 });
  return result.rows;
}

/** Runs `statement`; how many rows it wrote. */
export async function execute(on: Queryable, statement: Statement<Record<string, never>>, values: readonly unknown[] = []): Promise<number> {
  const result = await on.query({ name: statement.name, text: statement.text, values: values as unknown[], types: exactInt8 });
  return result.rowCount ?? 0;
}

/** A table's columns, written once in its repository: bare (`id, name`) or qualified by an alias (`p.id, p.name`). */
export interface Columns {
  readonly list: string;
  qualified(alias: string): string;
}

export function columns(names: readonly string[]): Columns {
  return { list: names.join(', '), qualified: (alias) => names.map((name) => `${alias}.${name}`).join(', ') };
}
