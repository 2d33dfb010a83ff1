// Plugins declare what must be registered before them (fastify-plugin `dependencies` and
// `decorators`): registered out of order, the app does not start, and the error names what
// is missing. Without the declarations, a plugin registered too early would start and
// answer differently (routes registered before the error handler or the security headers
// keep Fastify's defaults).
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import contract from '../../src/routes/plugin.js';
import errors from '../../src/errors/plugin.js';
import health from '../../src/plugins/health.js';
import loadShedding from '../../src/plugins/under-pressure.js';
import metricsPlugin, { createMetrics } from '../../src/plugins/metrics.js';
import securityHeaders from '../../src/http/security-headers.js';
import servedContract from '../../src/plugins/served-contract.js';
import cors from '../../src/plugins/cors.js';
import type pg from 'pg';

const noPool = {} as pg.Pool;
let fastify: FastifyInstance | undefined;
afterEach(async () => fastify?.close());

type Row = [string, { given: (f: FastifyInstance) => void; want: RegExp }];
const table: Row[] = [
  ['the contract before the error handler', { given: (f) => void f.register(contract, { handlers: {} as never, middleware: [] }), want: /dependency 'errors' of plugin 'contract'/ }],
  [
    'the contract before the security headers',
    { given: (f) => void f.register(errors).register(contract, { handlers: {} as never, middleware: [] }), want: /dependency 'api-security-headers' of plugin 'contract'/ },
  ],
  ['the served contract before the rate limit', { given: (f) => void f.register(servedContract, {}), want: /decorator 'spendRateLimit' required by 'served-contract'/ }],
  ['the probes before the error handler', { given: (f) => void f.register(health, { pool: noPool }), want: /dependency 'errors' of plugin 'health'/ }],
  ['load shedding before the error handler', { given: (f) => void f.register(loadShedding, { maxEventLoopDelay: 1000 }), want: /dependency 'errors' of plugin 'load-shedding'/ }],
  ['metrics before the security headers', { given: (f) => void f.register(metricsPlugin, { metrics: createMetrics('open'), access: 'open', pools: {} }), want: /dependency 'api-security-headers' of plugin 'metrics'/ }],
  ['CORS before the security headers', { given: (f) => void f.register(cors, { origins: 'https://app.example' }), want: /dependency 'api-security-headers' of plugin 'cors'/ }],
];

describe('a plugin registered out of order', () => {
  it.each(table)('%s: the app does not start', async (_title, { given, want }) => {
    fastify = Fastify({ logger: false });
    given(fastify);
    await expect(fastify.ready()).rejects.toThrow(want);
  });

  it('in order, the same plugins start', async () => {
    fastify = Fastify({ logger: false });
    await fastify.register(errors);
    await fastify.register(securityHeaders, { pagesPrefix: '/docs' });
    await fastify.register(cors, { origins: 'https://app.example' });
    await expect(fastify.ready()).resolves.toBeDefined();
  });
});
