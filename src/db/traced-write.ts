// A write statement, while tracing is on, that first sets the trace context on its
// connection (docs/decisions/0007-trace-context-through-events.md) in the same round trip:
// the context's Bind and Execute go out with the statement's own messages, before one Sync,
// so both run in one implicit transaction (or in the caller's BEGIN), in that order.
//
// Built on pg's Submittable extension point (pg.Query, as pg-cursor is): `prepare` sends the
// messages, and the context's answer (a row and its CommandComplete) is read and set aside
// before the statement's own. Invariant: the context statement is already prepared on the
// connection (`pipelined`), so that the one ParseComplete PostgreSQL may answer is the
// write's (pg credits every ParseComplete to the statement it is running); on a connection's
// first traced write, src/db/query.ts sends the two one after the other.
import pg from 'pg';

declare module 'pg' {
  // pg's Query, as it is (pg/lib/query.js), beyond what @types/pg declares.
  interface Query {
    prepare(connection: pg.Connection): void;
    handleDataRow(message: unknown): void;
    handleCommandComplete(message: unknown, connection: pg.Connection): void;
  }
}

/** The statement that sets the context: prepared once per connection. */
export const TRACE_CONTEXT = { name: 'trace-context', text: "SELECT set_config('animal_store.traceparent', $1, false)" } as const;

interface ConnectionInternals {
  connection?: { parsedStatements?: Record<string, string> };
}

/** Whether `client` has prepared the context statement, so that one round trip sends it with a write. */
export function pipelined(client: unknown): boolean {
  return (client as ConnectionInternals).connection?.parsedStatements?.[TRACE_CONTEXT.name] === TRACE_CONTEXT.text;
}

export class TracedWrite<R extends pg.QueryResultRow> extends pg.Query<R> {
  #contextAnswered = false;

  constructor(
    config: pg.QueryConfig,
    private readonly traceparent: string,
    callback: (error: Error | undefined, result: pg.QueryResult<R>) => void,
  ) {
    super(config, callback);
  }

  override prepare(connection: pg.Connection): void {
    connection.bind({ statement: TRACE_CONTEXT.name, values: [this.traceparent] }, false);
    connection.execute({ portal: '' }, false);
    super.prepare(connection);
  }

  override handleDataRow(message: unknown): void {
    if (this.#contextAnswered) super.handleDataRow(message);
  }

  override handleCommandComplete(message: unknown, connection: pg.Connection): void {
    if (this.#contextAnswered) super.handleCommandComplete(message, connection);
    else this.#contextAnswered = true;
  }
}
