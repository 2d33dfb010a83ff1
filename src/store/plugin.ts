// The store as a feature of the app: orders (src/store/orders.ts), and the job that expires
// each placed order within 2 s of its expiresAt (every instance runs it; each order is
// expired once).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { counted } from '../jobs/plugin.js';
import { createOrdersRepository, type OrdersRepository } from './orders.js';

declare module 'fastify' {
  interface FastifyInstance {
    orders: OrdersRepository;
  }
}

export default fp(
  async function store(fastify: FastifyInstance) {
    const orders = createOrdersRepository(fastify.pools.primary);
    fastify.decorate('orders', orders);
    fastify.jobs.add({ name: 'orders expiry', everyMs: 500, run: async () => counted('expired placed orders')(await orders.expireDue()) });
  },
  { name: 'store', dependencies: ['database', 'jobs'] },
);
