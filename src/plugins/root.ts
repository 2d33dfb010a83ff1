// GET /: where to go from here, for a person or a program that opens the service's address:
// the documentation (Swagger UI, and Redoc) and the contract, in the body and as RFC 8631
// links (service-doc, service-desc).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { basePath, spec } from '../contract/spec.js';

export default fp(
  async function root(fastify: FastifyInstance, { docsPrefix, redocPath }: { docsPrefix: string; redocPath: string }) {
    const links = { docs: docsPrefix, redoc: redocPath, openapiJson: `${basePath}/openapi.json`, openapiYaml: `${basePath}/openapi.yaml` };
    const body = JSON.stringify({ name: spec.info.title, version: spec.info.version, api: basePath, ...links });
    const link = [
      `<${links.docs}>; rel="service-doc"`,
      `<${links.redoc}>; rel="service-doc"`,
      `<${links.openapiJson}>; rel="service-desc"; type="application/json"`,
      `<${links.openapiYaml}>; rel="service-desc"; type="application/yaml"`,
    ].join(', ');
    fastify.get('/', (_request, reply) => reply.header('link', link).type('application/json; charset=utf-8').send(body));
  },
  { name: 'root', dependencies: ['errors', 'api-security-headers'] },
);
