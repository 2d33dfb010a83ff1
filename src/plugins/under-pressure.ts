// Load shedding (@fastify/under-pressure): while the event loop lags past the limit, new
// requests get a fast 503 with the Error body instead of queueing behind the stall.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { errorBody } from '../errors/catalogue.js';
import { sendError } from '../errors/answer.js';

export default fp(
  async function loadShedding(fastify: FastifyInstance, { maxEventLoopDelay, sampleInterval }: { maxEventLoopDelay: number; sampleInterval?: number }) {
    if (maxEventLoopDelay <= 0) return;
    // The first readings after start-up measure start-up itself (schemas compiled, plugins
    // loaded: the loop is busy by design), and would shed a new instance's first requests.
    // Pressure counts once two full sampling periods have passed since the app was ready.
    const period = sampleInterval ?? 1000;
    let armedAt = Number.POSITIVE_INFINITY;
    fastify.addHook('onReady', async () => {
      armedAt = performance.now() + 2 * period;
    });
    await fastify.register(underPressure, {
      maxEventLoopDelay,
      ...(sampleInterval ? { sampleInterval } : {}),
      // Not answering lets the request through (under-pressure's contract).
      pressureHandler: (_request, reply) => {
        if (performance.now() < armedAt) return;
        void sendError(reply, errorBody('unavailable', 'Service temporarily overloaded, retry later'));
      },
    });
  },
  { name: 'load-shedding', dependencies: ['errors'] },
);
