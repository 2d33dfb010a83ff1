import type { Handler } from '../contract/handler.js';
import type { Services } from './services.js';

// Exact counts from running totals (src/db/orders.ts): cheap whatever the catalogue's size.
export const getInventory: Handler<'getInventory', Services> = async (_input, { orders }) => ({ status: 200, body: await orders.inventory() });
