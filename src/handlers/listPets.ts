import { spec } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import type { Services } from './services.js';

// The validator fills in the default; this covers callers that bypass it (none over HTTP).
const defaultLimit = spec.components.parameters.Limit.schema.default;

export const listPets: Handler<'listPets', Services> = async ({ query }, { store }) => ({
  status: 200,
  body: await store.listPets(query.limit ?? defaultLimit, query.status),
});
