// Load shedding (@fastify/under-pressure): while the event loop lags past the limit, new
// requests get a fast 503 with the Error body instead of queueing behind the stall.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { errorBody } from '../errors.js';

export default fp(
  async function loadShedding(fastify: FastifyInstance, { maxEventLoopDelay, sampleInterval }: { maxEventLoopDelay: number; sampleInterval?: number }) {
    if (maxEventLoopDelay <= 0) return;
    await fastify.register(underPressure, {
      maxEventLoopDelay,
      ...(sampleInterval ? { sampleInterval } : {}),
      pressureHandler: (_request, reply) => {
        void reply
          .code(503)
          .header('retry-after', '1')
          .type('application/json; charset=utf-8')
          .send(errorBody('unavailable', 503, 'Service temporarily overloaded, retry later'));
      },
    });
  },
  { name: 'load-shedding' },
);
