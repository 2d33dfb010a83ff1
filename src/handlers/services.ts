import type { RecentWriters } from '../db/consistency.js';
import type { Store } from '../db/store.js';
import type { LazyCursorCodec } from '../pagination/cursor.js';

/** What handlers may use. Built once by the app and passed to every handler. */
export interface Services {
  store: Store;
  cursors: LazyCursorCodec;
  /** Read-your-writes with a replica: who wrote recently reads from the primary. */
  recentWriters: RecentWriters;
}
