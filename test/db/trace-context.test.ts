// With tracing on, each write leaves its own trace context on the events it writes
// (docs/decisions/0007-trace-context-through-events.md), whether the context went first on
// its own (the connection's first use of the statement) or in the same round trip as the
// write (src/db/traced-write.ts): on one connection, writes that succeed and fail in turn,
// outside and inside a transaction, each under a trace of its own.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closePool, createPool } from '../../src/db/pool.js';
import { execute, query, statement } from '../../src/db/query.js';
import { TracedWrite } from '../../src/db/traced-write.js';
import { inTransaction } from '../../src/db/transaction.js';
import { inSpan } from '../../src/tracing/context.js';
import { startTracing, type Tracing } from '../../src/tracing/tracing.js';
import { createTestDatabase } from '../helper.js';

const insert = statement<{ id: number }>('t-pet-insert', "INSERT INTO pets (name, category_id, status) VALUES ($1, 1, 'available') RETURNING id");
const refused = statement<Record<string, never>>('t-pet-insert-refused', "INSERT INTO pets (name, category_id, status) VALUES ($1, 1, 'no such status')");

let db: { url: string; drop: () => Promise<void> };
let pool: pg.Pool;
let tracer: Tracing | undefined;
let collector: http.Server;

beforeAll(async () => {
  db = await createTestDatabase();
  // One connection: every write after its first traced one goes in one round trip.
  pool = createPool({ DATABASE_URL: db.url, DB_POOL_MAX: 1, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
  collector = http.createServer((request, response) => request.resume().on('end', () => response.end()));
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  // The exporter reads the standard variables from the process's environment, as in the service.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  tracer = startTracing(process.env, () => 'test');
});
afterAll(async () => {
  await tracer?.shutdown();
  await new Promise((resolve) => collector?.close(resolve));
  if (pool) await closePool(pool);
  await db?.drop();
});

let traces = 0;
/** Runs `work` under a span of a new trace; the trace id. */
async function traced(work: () => Promise<unknown>): Promise<string> {
  const traceId = (++traces).toString(16).padStart(32, 'a');
  await inSpan('test write', { parent: `00-${traceId}-00f067aa0ba902b7-01` }, work);
  return traceId;
}

const traceOf = async (petId: number): Promise<string | null | undefined> =>
  (await pool.query<{ trace_parent: string | null }>("SELECT trace_parent FROM events WHERE type = 'pet.created' AND data LIKE $1", [`{"id":${petId},%`])).rows[0]?.trace_parent;

describe('the trace context of a write', () => {
  it('is the write\'s own, sent alone or with the write, after writes that failed, in and out of a transaction', async () => {
    const written: { id: number; traceId: string }[] = [];
    const write = async (name: string, inTx = false) => {
      let id = 0;
      const traceId = await traced(async () => {
        const rows = inTx ? await inTransaction(pool, (tx) => query(tx, insert, [name])) : await query(pool, insert, [name]);
        expect(rows).toHaveLength(1);
        id = rows[0]?.id ?? 0;
        expect(typeof id).toBe('number');
      });
      written.push({ id, traceId });
    };
    const fail = () => traced(() => expect(execute(pool, refused, ['Refused'])).rejects.toThrow(/check constraint/));
    // Which writes went in one round trip: the connection's first traced write goes in two,
    // every later one in one (the spy calls through to pg's own).
    const oneTrip = vi.spyOn(TracedWrite.prototype, 'prepare');
    const trips: boolean[] = [];
    const counted = async (step: () => Promise<unknown>) => {
      const before = oneTrip.mock.calls.length;
      await step();
      trips.push(oneTrip.mock.calls.length > before);
    };

    await counted(() => write('First'));
    await counted(() => write('Second'));
    await counted(() => fail());
    await counted(() => fail());
    await counted(() => write('After two failures'));
    await counted(() => write('In a transaction', true));
    await counted(() => write('In another', true));
    await counted(() => fail());
    await counted(() => write('Last'));
    oneTrip.mockRestore();
    expect(trips).toEqual([false, true, true, true, true, true, true, true, true]);

    for (const { id, traceId } of written) expect(await traceOf(id)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    // A write outside any span leaves none.
    const [outside] = await query(pool, insert, ['Outside a trace']);
    expect(await traceOf(outside?.id ?? 0)).toBeNull();
    expect(Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM pets')).rows[0]?.n)).toBe(written.length + 1);
  });
});
