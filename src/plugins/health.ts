// Probes for orchestrators, outside /v1 and without authentication:
// /healthz says the process answers; /readyz says the database answers too.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { errorBody } from '../errors.js';

export default fp(
  async function health(fastify: FastifyInstance, { pool }: { pool: pg.Pool }) {
    fastify.get('/healthz', async () => ({ status: 'ok' }));
    fastify.get('/readyz', async (_request, reply) => {
      try {
        await pool.query('SELECT 1');
        return { status: 'ready' };
      } catch {
        return reply.code(503).header('retry-after', '1').send(errorBody('unavailable', 503, 'The database is not reachable'));
      }
    });
  },
  { name: 'health' },
);
