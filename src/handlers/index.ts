// One handler module per operationId. The mapped type makes the compiler refuse a spec
// operation without a handler, and a handler for an operation the spec does not have.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bind } from '../contract/bind.js';
import type { OperationId } from '../contract/handler.js';
import { createPet } from './createPet.js';
import { getPet } from './getPet.js';
import { listOrders } from './listOrders.js';
import { listPets } from './listPets.js';
import type { Services } from './services.js';

export type ServiceHandlers = Record<OperationId, (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>>;

export function serviceHandlers(services: Services): ServiceHandlers {
  return {
    listPets: bind(listPets, services),
    createPet: bind(createPet, services),
    getPet: bind(getPet, services),
    listOrders: bind(listOrders, services),
  };
}
