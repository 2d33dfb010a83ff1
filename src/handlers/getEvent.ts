import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { viewerOf } from '../api-keys/caller.js';

// An event the caller may not see is the same 404 as no event: no key learns which exist.
export const getEvent: Handler<'getEvent'> = async ({ params, context }, { events }) => {
  const event = await events.get(params.eventId, viewerOf(context));
  if (!event) return errorAnswer('not_found', `Event ${params.eventId} does not exist`);
  return { status: 200, body: event };
};
