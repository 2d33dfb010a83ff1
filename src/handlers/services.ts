import type { Store } from '../db/store.js';
import type { LazyCursorCodec } from '../pagination/cursor.js';

/** What handlers may use. Built once by the app and passed to every handler. */
export interface Services {
  store: Store;
  cursors: LazyCursorCodec;
}
