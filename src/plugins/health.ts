// Probes for orchestrators, outside /v1 and without authentication:
// /healthz says the process answers; /readyz says that start-up has finished and the
// database answers.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type pg from 'pg';
import { createReadiness } from '../db/readiness.js';
import { errorBody } from '../errors/catalogue.js';
import { sendError } from '../errors/answer.js';

export default fp(
  async function health(fastify: FastifyInstance, { pool, startedUp = () => true }: { pool: pg.Pool; startedUp?: () => boolean }) {
    // Load shedding (src/plugins/under-pressure.ts) does not apply to the probes: a busy
    // instance is alive and ready, and an orchestrator restarting it would make things worse.
    const probe = { config: { pressureHandler: () => undefined } };
    fastify.get('/healthz', probe, async () => ({ status: 'ok' }));
    // Not one query per probe: 150 connections polling it made 3.6k queries/s. At most about
    // one per second (src/db/readiness.ts), however often it is asked.
    const ready = createReadiness(pool);
    fastify.get('/readyz', probe, async (_request, reply) => {
      // Listening comes before the last of start-up (src/server.ts): a script that waits for
      // ready and then reads what start-up printed must find it printed.
      const why = !startedUp() ? 'The service is still starting' : (await ready()) ? undefined : 'The database is not reachable';
      if (why === undefined) return { status: 'ready' };
      return sendError(reply, errorBody('unavailable', why));
    });
  },
  { name: 'health', dependencies: ['errors', 'api-security-headers'] },
);
