// The reference for `npm run bench`: the same API as a user would write it on bare Fastify
// + pg: plain parameterised queries (the obvious SQL, not the service's tuned statements),
// pg's defaults (a pool of 10), and none of the contract's machinery: no validation, no
// serializer schemas, no auth beyond comparing a constant string, no hooks, no logging.
import Fastify from 'fastify';
import pg from 'pg';

// pg's defaults: a pool of 10 connections, unnamed statements.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const token = `Bearer ${process.env.REFERENCE_TOKEN ?? 'reference'}`;
const app = Fastify({ logger: false });

type Row = { id: string; name: string; category_id: string; status: string | null; created_at: Date; updated_at: Date };
// The same Pet fields as ours, in its key order; times from pg's Dates.
const PET = 'id, name, category_id, status, created_at, coalesce(changed_at, created_at) AS updated_at';
const toPet = (r: Row) => ({
  id: Number(r.id),
  name: r.name,
  categoryId: Number(r.category_id),
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
  ...(r.status === null ? {} : { status: r.status }),
});

app.addHook('onRequest', async (request, reply) => {
  if (request.headers.authorization !== token) return reply.code(401).send({ code: 'unauthorized', message: 'no', status: 401 });
  return undefined;
});

// Keyset pagination as a user writes it: `after` is the last id of the previous page (a
// plain number, no signature), one row more than asked says whether a next page exists, and
// the next page's URL goes in `Link: <...>; rel="next"`.
// The filters, `status` and `categoryId`, are conditions ANDed before the keyset's (without
// either, the same statement as before `categoryId` existed).
// `orderBy` (name, createdAt or updatedAt, optionally ` desc`): the same keyset on the same
// index, the key the next page starts after (as text) and its id in the link.
const SORTS: Record<string, string> = {
  name: 'lower(name) COLLATE "C"',
  createdAt: "date_trunc('milliseconds', created_at AT TIME ZONE 'UTC')",
  updatedAt: "date_trunc('milliseconds', coalesce(changed_at, created_at) AT TIME ZONE 'UTC')",
};
// `q` (one word) as a user writes it on the same vocabulary and word index: the words it
// matches, ranked as ours ranks them (itself, the words it begins, those one letter away), each pet at its best word, every match sorted, pages by OFFSET.
// Typos are read from the trigram index alone: a short word's that share under a quarter of
// its triples (`tim`: `Tom`), which ours finds, are not, and the bench's words have none.
const SEARCH = `WITH w AS (SELECT search_fold($1) AS w),
  c AS (SELECT v.term, CASE WHEN v.term = w THEN 3 WHEN starts_with(v.term, w) THEN 2 ELSE 1 END AS class,
      CASE WHEN v.term = w OR starts_with(v.term, w) THEN 0 ELSE levenshtein(v.term, w) END AS sub
    FROM search_vocabulary v, w WHERE v.term = w OR starts_with(v.term, w) OR (length(w) >= 3 AND v.term % w AND levenshtein(v.term, w) <= 1)),
  m AS (SELECT DISTINCT ON (t.pet_id) t.pet_id, c.class, c.sub, c.term FROM c JOIN pet_terms t ON t.term = c.term ORDER BY t.pet_id, c.class DESC, c.sub, c.term)
SELECT ${PET} FROM m JOIN pets p ON p.id = m.pet_id WHERE p.deleted_at IS NULL ORDER BY m.class DESC, m.sub, m.term, p.id LIMIT $2 OFFSET $3`;
app.get('/v1/pets', async (request, reply) => {
  const q = request.query as { limit?: string; status?: string; categoryId?: string; after?: string; orderBy?: string; key?: string; q?: string; offset?: string };
  if (q.q !== undefined) {
    const limit = Number(q.limit ?? 20);
    const offset = Number(q.offset ?? 0);
    const result = await pool.query<Row>(SEARCH, [q.q, limit + 1, offset]);
    if (result.rows.length > limit) reply.header('link', `</v1/pets?limit=${limit}&q=${encodeURIComponent(q.q)}&offset=${offset + limit}>; rel="next"`);
    return result.rows.slice(0, limit).map(toPet);
  }
  const limit = Number(q.limit ?? 20);
  const after = Number(q.after ?? 0);
  const [field = 'id', direction] = (q.orderBy ?? 'id').split(' ');
  const sort = SORTS[field];
  const conditions: string[] = [];
  const values: unknown[] = [];
  if (q.status) conditions.push(`status = $${values.push(q.status)}`);
  if (q.categoryId) conditions.push(`category_id = $${values.push(Number(q.categoryId))}`);
  const [past, way] = direction === 'desc' ? ['<', ' DESC'] : ['>', ''];
  if (sort === undefined) {
    if (q.after !== undefined || !way) conditions.push(`id ${past} $${values.push(after)}`);
  } else if (q.key !== undefined) conditions.push(`(${sort}, id) ${past} ($${values.push(q.key)}, $${values.push(after)})`);
  const order = sort === undefined ? `id${way}` : `${sort}${way}, id${way}`;
  const result = await pool.query<Row & { k: string | null }>(
    `SELECT ${PET}, ${sort === undefined ? 'NULL' : field === 'name' ? sort : `${sort}::text`} AS k FROM pets ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY ${order} LIMIT $${values.push(limit + 1)}`,
    values,
  );
  const pets = result.rows.slice(0, limit).map(toPet);
  const last = result.rows[limit - 1];
  const filters = `${q.status ? `&status=${q.status}` : ''}${q.categoryId ? `&categoryId=${q.categoryId}` : ''}${q.orderBy ? `&orderBy=${encodeURIComponent(q.orderBy)}` : ''}`;
  if (result.rows.length > limit && last) reply.header('link', `</v1/pets?limit=${limit}${filters}${last.k === null ? '' : `&key=${encodeURIComponent(last.k)}`}&after=${last.id}>; rel="next"`);
  return pets;
});

app.get('/v1/pets/:petId', async (request, reply) => {
  const result = await pool.query<Row>(`SELECT ${PET} FROM pets WHERE id = $1`, [(request.params as { petId: string }).petId]);
  const row = result.rows[0];
  return row ? toPet(row) : reply.code(404).send({ code: 'not_found', message: 'no', status: 404 });
});

app.post('/v1/pets', async (request, reply) => {
  const body = request.body as { name: string; categoryId: number; status?: string };
  const result = await pool.query<Row>(`INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${PET}`, [body.name, body.categoryId, body.status ?? null]);
  const pet = toPet(result.rows[0] as Row);
  return reply.code(201).header('location', `/v1/pets/${pet.id}`).send(pet);
});

// updatePet as a user writes it: the fields the merge patch gives, in one plain UPDATE ...
// RETURNING (a SELECT for `{}`); no If-Match, no ETag, no check for an order holding the pet.
// The merge patch's media type is parsed as JSON, as Fastify parses application/json.
app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, app.getDefaultJsonParser('ignore', 'ignore'));
const PATCHABLE = [
  ['name', 'name'],
  ['categoryId', 'category_id'],
  ['status', 'status'],
] as const;
app.patch('/v1/pets/:petId', async (request, reply) => {
  const patch = request.body as { name?: string; categoryId?: number; status?: string | null };
  const values: unknown[] = [(request.params as { petId: string }).petId];
  const sets = PATCHABLE.filter(([field]) => field in patch).map(([field, column]) => `${column} = $${values.push(patch[field])}`);
  const result = sets.length
    ? await pool.query<Row>(`UPDATE pets SET ${sets.join(', ')}, changed_at = now() WHERE id = $1 RETURNING ${PET}`, values)
    : await pool.query<Row>(`SELECT ${PET} FROM pets WHERE id = $1`, values);
  const row = result.rows[0];
  return row ? toPet(row) : reply.code(404).send({ code: 'not_found', message: 'no', status: 404 });
});

// deletePet as a user writes it: the row deleted (404 when there was none).
app.delete('/v1/pets/:petId', async (request, reply) => {
  const result = await pool.query('DELETE FROM pets WHERE id = $1', [(request.params as { petId: string }).petId]);
  return result.rowCount ? reply.code(204).send() : reply.code(404).send({ code: 'not_found', message: 'no', status: 404 });
});

// Orders as a user writes them: in one transaction, a conditional UPDATE takes the pet
// (`WHERE status = 'available'`: of two concurrent placements for one pet, the second
// finds it pending once the first commits, and updates nothing), then an INSERT; closing
// an order is the same, the other way round.
const HOLD_SECONDS = 900;
type OrderRow = { id: string; pet_id: string; status: string; placed_at: Date; expires_at: Date; closed_at: Date | null };
const toOrder = (r: OrderRow) => ({
  id: Number(r.id),
  petId: Number(r.pet_id),
  status: r.status,
  placedAt: r.placed_at.toISOString(),
  expiresAt: r.expires_at.toISOString(),
  ...(r.closed_at ? { closedAt: r.closed_at.toISOString() } : {}),
});

/** Runs `work` in a transaction on one pooled client; rolls back if it throws or returns undefined. */
async function transaction<T>(work: (client: pg.PoolClient) => Promise<T | undefined>): Promise<T | undefined> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query(result === undefined ? 'ROLLBACK' : 'COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

app.post('/v1/store/orders', async (request, reply) => {
  const { petId } = request.body as { petId: number };
  const order = await transaction(async (client) => {
    const taken = await client.query("UPDATE pets SET status = 'pending', changed_at = now() WHERE id = $1 AND status = 'available'", [petId]);
    if (taken.rowCount === 0) return undefined;
    const inserted = await client.query<OrderRow>("INSERT INTO orders (pet_id, status, expires_at) VALUES ($1, 'placed', now() + make_interval(secs => $2)) RETURNING *", [petId, HOLD_SECONDS]);
    return toOrder(inserted.rows[0] as OrderRow);
  });
  if (order) return reply.code(201).header('location', `/v1/store/orders/${order.id}`).send(order);
  const pet = await pool.query('SELECT status FROM pets WHERE id = $1', [petId]);
  return pet.rowCount ? reply.code(409).send({ code: 'pet_not_available', message: 'no', status: 409 }) : reply.code(422).send({ code: 'pet_not_found', message: 'no', status: 422 });
});

for (const [action, status, petStatus] of [
  ['cancel', 'cancelled', 'available'],
  ['complete', 'completed', 'sold'],
] as const) {
  app.post(`/v1/store/orders/:orderId/${action}`, async (request, reply) => {
    const orderId = (request.params as { orderId: string }).orderId;
    const order = await transaction(async (client) => {
      const closed = await client.query<OrderRow>("UPDATE orders SET status = $2, closed_at = now() WHERE id = $1 AND status = 'placed' AND expires_at > now() RETURNING *", [orderId, status]);
      const row = closed.rows[0];
      if (!row) return undefined;
      await client.query('UPDATE pets SET status = $2, changed_at = now() WHERE id = $1', [row.pet_id, petStatus]);
      return toOrder(row);
    });
    if (order) return order;
    const exists = await pool.query('SELECT 1 FROM orders WHERE id = $1', [orderId]);
    return exists.rowCount ? reply.code(409).send({ code: 'order_closed', message: 'no', status: 409 }) : reply.code(404).send({ code: 'not_found', message: 'no', status: 404 });
  });
}

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`Server listening at ${address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
