// Cursors for every list operation, signed with the deployment's own secret (the
// service_secrets table: every instance reads the same one, so a cursor one instance wrote
// is good on all of them).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createServiceSecretsRepository } from '../db/service-secrets.js';
import { lazyCursorCodec, type LazyCursorCodec } from './cursor.js';

declare module 'fastify' {
  interface FastifyInstance {
    cursors: LazyCursorCodec;
  }
}

export default fp(
  async function pagination(fastify: FastifyInstance) {
    const secrets = createServiceSecretsRepository(fastify.pools.primary);
    fastify.decorate('cursors', lazyCursorCodec(() => secrets.get('cursor')));
  },
  { name: 'pagination', dependencies: ['database'] },
);
