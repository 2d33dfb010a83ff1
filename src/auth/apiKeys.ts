// API keys: generated here, stored as SHA-256 hashes, checked against an in-process cache
// so the hot path costs no database round trip. The cache follows the table through
// LISTEN/NOTIFY (a trigger notifies on any change a check depends on), so a revocation or a
// rotation reaches every instance within milliseconds. While the listener is down the cache
// cannot be trusted, and each check asks the database instead, by the same rules.
//
// Invariants of a check (the cache's and the database's alike):
// - a secret is accepted only for a key that is not revoked, and only while the clock of
//   this instance is before its end: the key's `expires_at` for the current secret, and
//   the earlier of the rotation's `previous_expires_at` and `expires_at` for the secret a
//   rotation replaced. Ends are judged at every request, not by a reload, so an expiry or
//   the end of a grace takes effect on every instance at that moment (up to clock skew);
// - the identity a check returns carries the key's scopes as a Set: the per-operation
//   check (src/auth/bearer.ts) is one lookup.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ApiKeysRepository, KeySecrets } from '../db/api-keys.js';
import type { Scope } from './scopes.js';

const KEY_PREFIX = 'ask_';
const CHANNEL = 'api_keys_changed';
/** Issued keys are 47 characters; room is left for a longer format. */
const MAX_KEY_LENGTH = 256;
/** How many characters of a secret its key shows as `prefix` (`ask_` and 4 more). */
export const SHOWN_PREFIX_LENGTH = 8;

export interface ApiKeyIdentity {
  readonly id: number;
  readonly name: string;
  readonly scopes: ReadonlySet<Scope>;
}

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** A new secret: the key to show once, its hash to store, and its prefix to show always. */
export function newSecret(): { secret: string; hash: Buffer; prefix: string } {
  const secret = generateApiKey();
  return { secret, hash: hashApiKey(secret), prefix: secret.slice(0, SHOWN_PREFIX_LENGTH) };
}

/** A secret the cache accepts: for which key, and until when (ms since the epoch; Infinity: no end). */
interface Accepted {
  readonly identity: ApiKeyIdentity;
  readonly until: number;
}

const endOf = (date: Date | null): number => (date === null ? Infinity : date.getTime());

/** The secrets of a key that is not revoked, by their hashes in hex, each with when it stops working. */
function acceptedSecrets(row: KeySecrets): [string, Accepted][] {
  const identity: ApiKeyIdentity = { id: row.id, name: row.name, scopes: new Set(row.scopes) };
  const until = endOf(row.expires_at);
  const secrets: [string, Accepted][] = [[row.key_hash.toString('hex'), { identity, until }]];
  if (row.previous_key_hash !== null) secrets.push([row.previous_key_hash.toString('hex'), { identity, until: Math.min(until, endOf(row.previous_expires_at)) }]);
  return secrets;
}

interface Logger {
  warn: (obj: object, msg: string) => void;
  info: (msg: string) => void;
}

export interface ApiKeyVerifier {
  /** The key's identity, or undefined when it is unknown, revoked, expired or a secret whose grace has ended (at `now`). */
  verify(key: string, now?: number): Promise<ApiKeyIdentity | undefined>;
  /**
   * Reloads the cache now: after a write to api_keys made by this instance, so that its next
   * request sees it (other instances follow by NOTIFY, within milliseconds).
   */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export async function createApiKeyVerifier(options: {
  apiKeys: ApiKeysRepository;
  databaseUrl: string;
  log: Logger;
  /** Pause before reconnecting the listener after it drops. */
  reconnectDelayMs?: number;
  /** How often the listener's connection must answer a probe (a silent connection is dropped by the next one). */
  probeEveryMs?: number;
}): Promise<ApiKeyVerifier> {
  const { apiKeys, databaseUrl, log } = options;
  const reconnectDelayMs = options.reconnectDelayMs ?? 500;
  const probeEveryMs = options.probeEveryMs ?? 1000;
  let cache = new Map<string, Accepted>();
  // Tokens already accepted against the current cache, so the hot path skips the hash (the
  // rate limiter and authentication both ask). Only accepted ones: each is an issued key
  // (47 bytes), so this holds at most CHECKED_MAX of them however large or numerous the
  // tokens clients send. Refused tokens are hashed again each time rather than kept:
  // keeping them let 7,000 distinct 15 KB bogus tokens pin 90 MiB. Cleared with every
  // reload; an entry whose end has passed is refused by the clock like the cache's.
  let checked = new Map<string, Accepted>();
  const CHECKED_MAX = 10_000;
  let listener: pg.Client | undefined;
  let live = false;
  let closed = false;
  let reloading: Promise<void> | undefined;
  let reloadAgain = false;

  async function reload(): Promise<void> {
    // Coalesce bursts of notifications into at most one reload in flight plus one queued.
    if (reloading) {
      reloadAgain = true;
      return reloading;
    }
    reloading = (async () => {
      do {
        reloadAgain = false;
        const rows = await apiKeys.active();
        cache = new Map(rows.flatMap(acceptedSecrets));
        checked = new Map();
      } while (reloadAgain);
    })().finally(() => {
      reloading = undefined;
    });
    return reloading;
  }

  // One reconnection at a time. A failed connect is reported twice by pg (the rejected
  // connect() and the client's 'end'), and each report used to start its own retry loop:
  // through an outage they multiplied, and each one that later succeeded kept a listener.
  let reconnectTimer: NodeJS.Timeout | undefined;
  function scheduleReconnect(): void {
    live = false;
    if (closed || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      void connect();
    }, reconnectDelayMs).unref();
  }

  // A connection can die without a word (a network cut drops no packet to say so), and the
  // cache would then miss every notification while it still counts as live. So the
  // listener answers a probe every probeEveryMs: a probe still unanswered when the next
  // is due drops it, and checks go to the database until it is back. The verdict waits
  // for setImmediate, after the event loop has read what arrived: a busy loop that let the
  // timer fire late also let the answer wait, and that is not a dead connection.
  let probeTimer: NodeJS.Timeout | undefined;
  function probe(client: pg.Client, drop: () => void): void {
    let pending: Promise<unknown> | undefined;
    probeTimer = setInterval(() => {
      if (pending === undefined) {
        const sent: Promise<unknown> = client.query('SELECT 1').then(
          () => {
            if (pending === sent) pending = undefined;
          },
          () => drop(),
        );
        pending = sent;
        return;
      }
      const late = pending;
      setImmediate(() => {
        if (pending !== late || listener !== client) return;
        log.warn({}, `api key listener: no answer within ${probeEveryMs} ms; checking keys against the database until it is back`);
        drop();
      });
    }, probeEveryMs).unref();
  }

  /** Connects, listens and loads the keys; on any failure, retries later. True once live. */
  async function connect(): Promise<boolean> {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: 'animal-store-api:api-keys', connectionTimeoutMillis: 2000 });
    let dropped = false;
    const drop = (): void => {
      if (dropped) return;
      dropped = true;
      if (listener === client) {
        listener = undefined;
        clearInterval(probeTimer);
      }
      client.end().catch(() => {});
      scheduleReconnect();
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', () => {
      reload().catch((error: unknown) => {
        // Without a fresh copy the cache cannot be trusted: fall back to the database.
        log.warn({ err: error }, 'api key cache: reload failed');
        drop();
      });
    });
    try {
      await client.connect();
      if (closed) {
        dropped = true;
        await client.end();
        return false;
      }
      // LISTEN before loading, so no change can fall between the load and the subscription.
      await client.query(`LISTEN ${CHANNEL}`);
      listener = client;
      await reload();
      if (dropped) return false;
      live = true;
      probe(client, drop);
      return true;
    } catch (error) {
      if (!closed) log.warn({ err: error }, 'api key listener: not connected, checking keys against the database until it is');
      drop();
      return false;
    }
  }

  /** The database's answer for one token, by the rules the cache applies. */
  async function fromDatabase(key: string, now: number): Promise<ApiKeyIdentity | undefined> {
    const hash = hashApiKey(key);
    const row = await apiKeys.findByHash(hash);
    if (!row) return undefined;
    const hex = hash.toString('hex');
    const accepted = acceptedSecrets(row).find(([secret]) => secret === hex)?.[1];
    return accepted && now < accepted.until ? accepted.identity : undefined;
  }

  await connect();

  return {
    async refresh() {
      // Not live: every check asks the database, which already has the change.
      if (!live) return;
      await reload().catch((error: unknown) => log.warn({ err: error }, 'api key cache: reload after a change failed; the listener will reload it'));
    },
    async verify(key: string, now = Date.now()) {
      // Far longer than any key we issue: refused without hashing up to 16 KiB of it.
      if (key.length > MAX_KEY_LENGTH) return undefined;
      if (!live) return fromDatabase(key, now);
      let accepted = checked.get(key);
      if (accepted === undefined) {
        accepted = cache.get(hashApiKey(key).toString('hex'));
        if (accepted === undefined) return undefined;
        if (checked.size >= CHECKED_MAX) checked = new Map();
        checked.set(key, accepted);
      }
      return now < accepted.until ? accepted.identity : undefined;
    },
    async close() {
      closed = true;
      live = false;
      clearTimeout(reconnectTimer);
      clearInterval(probeTimer);
      const client = listener;
      listener = undefined;
      if (client) {
        client.removeAllListeners('end');
        client.removeAllListeners('error');
        client.on('error', () => {});
        await client.end().catch(() => {});
      }
    },
  };
}

/**
 * The last use of each key, kept in memory and written by `flush` in one statement for all
 * (src/app.ts runs it every API_KEY_USAGE_FLUSH_MS, and once more when the app closes), so
 * that a request never costs a write. What a flush could not write is kept for the next.
 */
export function createKeyUsage(apiKeys: Pick<ApiKeysRepository, 'recordUse'>) {
  let pending = new Map<number, number>();
  return {
    /** The key `id` authenticated a request at `at` (ms since the epoch). */
    record(id: number, at: number): void {
      pending.set(id, at);
    },
    /** Writes the uses recorded since the last flush; resolves with how many keys. */
    async flush(): Promise<number> {
      if (pending.size === 0) return 0;
      const uses = pending;
      pending = new Map();
      try {
        await apiKeys.recordUse(uses);
        return uses.size;
      } catch (error) {
        // Kept for the next flush; a later use recorded meanwhile wins.
        for (const [id, at] of uses) if ((pending.get(id) ?? -Infinity) < at) pending.set(id, at);
        throw error;
      }
    },
  };
}

export type KeyUsage = ReturnType<typeof createKeyUsage>;
