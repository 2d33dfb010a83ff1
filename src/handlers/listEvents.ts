import type { Handler } from '../contract/handler.js';
import { errorAnswer } from '../errors/catalogue.js';
import { listPaging, refused } from '../pagination/page.js';
import { viewerOf } from '../api-keys/caller.js';

const paging = listPaging('listEvents');

// The events the caller may see (src/events/feed.ts), paged like every list. The feed has no
// last page: every answer carries rel="next", after its last event, or from where it started
// when it is empty (nothing newer is visible yet; or further on, where the feed is final up
// to). A cursor before what retention has deleted is 410, a cursor at 0 included: the events
// it would return are gone.
export const listEvents: Handler<'listEvents'> = async ({ query, context }, { events, cursors, config }) => {
  const started = await paging.start(query, cursors);
  if (refused(started)) return started;
  const page = await events.list({ viewer: viewerOf(context), types: query.type, after: query.cursor === undefined ? undefined : started.after, limit: started.limit });
  if (page.outcome === 'expired') {
    return errorAnswer('cursor_expired', `This cursor points before the oldest event kept (events are kept ${config.EVENT_RETENTION_DAYS} days): start again without cursor`);
  }
  return paging.answer(query, started, page.events, page.next, cursors);
};
