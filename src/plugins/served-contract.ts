// GET /v1/openapi.json and /v1/openapi.yaml: the contract, without authentication, with an
// ETag so that clients and SDK generators can revalidate cheaply.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { basePath } from '../contract/spec.js';
import { addVary } from '../http/vary.js';
import { requestOrigin, servedJson, servedYaml } from '../routes/served.js';

export default fp(
  async function servedContract(fastify: FastifyInstance, { publicUrl }: { publicUrl?: string }) {
    const serve = (render: (origin: string | undefined) => string, type: string) => (request: FastifyRequest, reply: FastifyReply) => {
      const body = render(requestOrigin(publicUrl, request.protocol, request.host));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      reply.header('etag', etag).header('cache-control', 'public, max-age=300');
      if (!publicUrl) addVary(reply, 'Host');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(type).send(body);
    };
    // Under /v1, so they spend from the caller's rate-limit budget like the operations.
    const onRequest = fastify.spendRateLimit();
    fastify.get(`${basePath}/openapi.json`, { onRequest }, serve(servedJson, 'application/json; charset=utf-8'));
    fastify.get(`${basePath}/openapi.yaml`, { onRequest }, serve(servedYaml, 'application/yaml; charset=utf-8'));
  },
  { name: 'served-contract', dependencies: ['rate-limit', 'api-security-headers'], decorators: { fastify: ['spendRateLimit'] } },
);
