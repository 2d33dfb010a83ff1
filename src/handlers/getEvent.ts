import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors.js';
import { viewerOf } from './caller.js';
import type { Services } from './services.js';

// An event the caller may not see is the same 404 as no event: no key learns which exist.
export const getEvent: Handler<'getEvent', Services> = async ({ params, context }, { events }) => {
  const event = await events.get(params.eventId, viewerOf(context));
  if (!event) return errorAnswer('not_found', `Event ${params.eventId} does not exist`);
  return { status: 200, body: event };
};
