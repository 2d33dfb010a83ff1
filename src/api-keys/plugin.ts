// API keys as a feature of the app: the api_keys table (src/api-keys/repository.ts), the
// verifier's cache that every request is checked against (src/api-keys/verifier.ts), each
// key's last use written in batches, and `request.apiKey`, set by authentication.
//
// A key this instance creates, rotates or revokes is read into its cache before the answer
// leaves, so the client's next request here sees it (a new secret works at once); other
// instances follow by NOTIFY (docs/security.md, "How 'within 2 s on every instance' holds").
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createApiKeysRepository, type ApiKeysRepository } from './repository.js';
import { createApiKeyVerifier, createKeyUsage, type ApiKeyIdentity, type ApiKeyVerifier, type KeyUsage } from './verifier.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The api_keys table; its writes are in this instance's cache before they resolve. */
    apiKeys: ApiKeysRepository;
    apiKeyVerifier: ApiKeyVerifier;
    keyUsage: KeyUsage;
  }
  interface FastifyRequest {
    /** The API key that authenticated this request; null before authentication. */
    apiKey: ApiKeyIdentity | null;
  }
}

export default fp(
  async function apiKeys(fastify: FastifyInstance) {
    const keys = createApiKeysRepository(fastify.pools.primary);
    const verifier = await createApiKeyVerifier({ apiKeys: keys, databaseUrl: fastify.config.DATABASE_URL, log: fastify.log });
    // Each key's last use, written for all keys every API_KEY_USAGE_FLUSH_MS and once more
    // when the app closes, after its last request: never a write per request.
    const usage = createKeyUsage(keys);
    const thenRefresh =
      <A extends unknown[], R>(write: (...args: A) => Promise<R>, idOf: (result: R, ...args: A) => number | undefined) =>
      async (...args: A): Promise<R> => {
        const result = await write(...args);
        const id = idOf(result, ...args);
        if (id !== undefined) await verifier.refresh(id);
        return result;
      };
    fastify.decorate('apiKeys', {
      ...keys,
      createCapped: thenRefresh(keys.createCapped, (key) => key?.id),
      rotate: thenRefresh(keys.rotate, (_, id) => id),
      revoke: thenRefresh(keys.revoke, (_, id) => id),
    });
    fastify.decorate('apiKeyVerifier', verifier);
    fastify.decorate('keyUsage', usage);
    fastify.decorateRequest('apiKey', null);
    fastify.jobs.add({ name: 'api keys last used', everyMs: fastify.config.API_KEY_USAGE_FLUSH_MS, run: async () => void (await usage.flush()) });
    fastify.addHook('onClose', async () => {
      await verifier.close();
      await usage.flush().catch((error: unknown) => fastify.log.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, 'api keys last used: not written at close'));
    });
  },
  { name: 'api-keys', dependencies: ['database', 'jobs'], decorators: { fastify: ['config'] } },
);
