import type { ApiKeyIdentity } from './auth/apiKeys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key that authenticated this request; null before authentication. */
    apiKey: ApiKeyIdentity | null;
  }
}
