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

type Row = { id: string; name: string; category_id: string; status: string | null };
const toPet = (r: Row) => (r.status === null ? { id: Number(r.id), name: r.name, categoryId: Number(r.category_id) } : { id: Number(r.id), name: r.name, categoryId: Number(r.category_id), status: r.status });

app.addHook('onRequest', async (request, reply) => {
  if (request.headers.authorization !== token) return reply.code(401).send({ code: 'unauthorized', message: 'no', status: 401 });
  return undefined;
});

// Keyset pagination as a user writes it: `after` is the last id of the previous page (a
// plain number, no signature), one row more than asked says whether a next page exists, and
// the next page's URL goes in `Link: <...>; rel="next"`.
app.get('/v1/pets', async (request, reply) => {
  const q = request.query as { limit?: string; status?: string; after?: string };
  const limit = Number(q.limit ?? 20);
  const after = Number(q.after ?? 0);
  const result = q.status
    ? await pool.query<Row>('SELECT id, name, category_id, status FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3', [q.status, after, limit + 1])
    : await pool.query<Row>('SELECT id, name, category_id, status FROM pets WHERE id > $1 ORDER BY id LIMIT $2', [after, limit + 1]);
  const pets = result.rows.slice(0, limit).map(toPet);
  const last = pets[pets.length - 1];
  if (result.rows.length > limit && last) reply.header('link', `</v1/pets?limit=${limit}${q.status ? `&status=${q.status}` : ''}&after=${last.id}>; rel="next"`);
  return pets;
});

app.get('/v1/pets/:petId', async (request, reply) => {
  const result = await pool.query<Row>('SELECT id, name, category_id, status FROM pets WHERE id = $1', [(request.params as { petId: string }).petId]);
  const row = result.rows[0];
  return row ? toPet(row) : reply.code(404).send({ code: 'not_found', message: 'no', status: 404 });
});

app.post('/v1/pets', async (request, reply) => {
  const body = request.body as { name: string; categoryId: number; status?: string };
  const result = await pool.query<Row>('INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id, name, category_id, status', [body.name, body.categoryId, body.status ?? null]);
  const pet = toPet(result.rows[0] as Row);
  return reply.code(201).header('location', `/v1/pets/${pet.id}`).send(pet);
});

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`Server listening at ${address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
