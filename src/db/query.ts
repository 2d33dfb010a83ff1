// The one way repositories run SQL. A statement is declared once, with a name and the type
// of its rows, in its table's repository module; rows come back as objects with named
// columns. Every statement is named, so PostgreSQL plans it once per connection (its generic
// plan: src/db/pool.ts). bigint columns are parsed to exact numbers: every table's checks
// keep them below 2^53 (pg's default keeps them as strings).
import pg from 'pg';
import { currentTraceparent, tracing } from '../tracing/context.js';
import { pipelined, TRACE_CONTEXT, TracedWrite } from './traced-write.js';

/** What runs statements: a pool (each statement its own transaction) or a transaction. */
export type Queryable = Pick<pg.PoolClient, 'query'>;

/** A named statement whose rows are `Row`. */
export interface Statement<Row extends object> {
  readonly name: string;
  readonly text: string;
  /** Whether it may write (and so write events, whose trace context it sets: `run`). */
  readonly writes: boolean;
  /** Never set: ties the statement to the type of its rows. */
  readonly row?: Row;
}

export function statement<Row extends object>(name: string, text: string): Statement<Row> {
  return { name, text, writes: WRITES.test(text) };
}

// INSERT INTO, UPDATE <table> [alias] SET, DELETE FROM: not a read's FOR [NO KEY] UPDATE.
const WRITES = /\b(INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+[\w.]+(\s+\w+)?\s+SET)\b/i;

// With tracing on, a statement that may write first sets the trace context on its connection
// (docs/decisions/0007-trace-context-through-events.md): `events.trace_parent` takes it as its default. Set on the session,
// not the transaction, so that a statement outside BEGIN carries it; every traced write sets
// it again, '' when there is no span. Both go in one round trip once the connection has
// prepared the context's statement (src/db/traced-write.ts); the first time, one after the other.
async function run<R extends pg.QueryResultRow>(on: Queryable, config: pg.QueryConfig): Promise<pg.QueryResult<R>> {
  const client = on instanceof pg.Pool ? await on.connect() : on;
  try {
    const traceparent = currentTraceparent();
    if (pipelined(client)) {
      return await new Promise<pg.QueryResult<R>>((resolve, reject) => {
        client.query(new TracedWrite<R>(config, traceparent, (error, result) => (error ? reject(error) : resolve(result))));
      });
    }
    await client.query({ ...TRACE_CONTEXT, values: [traceparent] });
    return await client.query<R>(config);
  } finally {
    if (client !== on) (client as pg.PoolClient).release();
  }
}

const INT8 = 20;
const exactInt8 = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};

/** Runs `statement` with `values` on `on`; its rows. */
export async function query<Row extends object>(on: Queryable, statement: Statement<Row>, values: readonly unknown[] = []): Promise<Row[]> {
  const config = { name: statement.name, text: statement.text, values: values as unknown[], types: exactInt8 };
  const result = tracing() && statement.writes ? await run<Row & pg.QueryResultRow>(on, config) : await on.query<Row & pg.QueryResultRow>(config);
  return result.rows;
}

/** Runs `statement`; how many rows it wrote. */
export async function execute(on: Queryable, statement: Statement<Record<string, never>>, values: readonly unknown[] = []): Promise<number> {
  const config = { name: statement.name, text: statement.text, values: values as unknown[], types: exactInt8 };
  const result = tracing() && statement.writes ? await run(on, config) : await on.query(config);
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
