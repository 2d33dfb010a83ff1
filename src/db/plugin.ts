// The database the app's repositories use: the primary, and a streaming replica when
// DATABASE_READ_URL is set (src/db/consistency.ts says which reads go there). The pools are
// built and closed by whoever builds the app (src/server.ts, the tests), never here.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Pools } from './consistency.js';

declare module 'fastify' {
  interface FastifyInstance {
    pools: Pools;
  }
}

export default fp(
  async function database(fastify: FastifyInstance, pools: Pools) {
    fastify.decorate('pools', { primary: pools.primary, ...(pools.replica ? { replica: pools.replica } : {}) });
  },
  { name: 'database' },
);
