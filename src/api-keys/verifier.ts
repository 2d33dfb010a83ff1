// API keys: generated here, stored as SHA-256 hashes, checked against an in-process cache
// so the hot path costs no database round trip. The cache follows the table through
// LISTEN/NOTIFY: a trigger notifies the id of each key whose cached columns change, and
// each instance reads that key alone again (an empty payload, a TRUNCATE, reads them all),
// so a revocation or a rotation reaches every instance within milliseconds, at a cost that
// does not grow with the number of keys. While the listener is down the cache cannot be
// trusted, and each check asks the database instead, by the same rules.
//
// Invariants of a check (the cache's and the database's alike):
// - a secret is accepted only for a key that is not revoked, and only while the clock of
//   this instance is before its end: the key's `expires_at` for the current secret, and
//   the earlier of the rotation's `previous_expires_at` and `expires_at` for the secret a
//   rotation replaced. Ends are judged at every request, not by a reload, so an expiry or
//   the end of a grace takes effect on every instance at that moment (up to clock skew);
// - the identity a check returns carries the key's scopes as a Set: the per-operation
//   check (src/api-keys/bearer.ts) is one lookup. A previous secret's identity says so, and
//   lacks the scopes the contract keeps from previous secrets (NOT_HELD_BY_PREVIOUS_SECRETS);
// - the identity carries the key's own expiry, so that no key creates one that outlives it.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ApiKeysRepository, KeySecrets } from './repository.js';
import { NOT_HELD_BY_PREVIOUS_SECRETS, type Scope } from '../contract/scopes.js';

const KEY_PREFIX = 'ask_';
const CHANNEL = 'api_keys_changed';
/** Issued keys are 47 characters; room is left for a longer format. */
const MAX_KEY_LENGTH = 256;
/** How many characters of a secret its key shows as `prefix` (`ask_` and 4 more). */
export const SHOWN_PREFIX_LENGTH = 8;

export interface ApiKeyIdentity {
  readonly id: number;
  readonly name: string;
  /** What this secret may do: the key's scopes, less those a previous secret never holds. */
  readonly scopes: ReadonlySet<Scope>;
  /** The key's own scopes (a previous secret holds fewer). */
  readonly keyScopes: ReadonlySet<Scope>;
  /** When the key expires (ms since the epoch), Infinity when never. */
  readonly expiresAt: number;
  /** Whether the secret is the one a rotation replaced, in its grace. */
  readonly previousSecret: boolean;
  /** The secret's SHA-256 hash, as stored: a rotation replaces it only while it is current. */
  readonly secretHash: Buffer;
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
  const expiresAt = endOf(row.expires_at);
  const keyScopes: ReadonlySet<Scope> = new Set(row.scopes);
  const identity: ApiKeyIdentity = { id: row.id, name: row.name, scopes: keyScopes, keyScopes, expiresAt, previousSecret: false, secretHash: row.key_hash };
  const secrets: [string, Accepted][] = [[row.key_hash.toString('hex'), { identity, until: expiresAt }]];
  if (row.previous_key_hash !== null) {
    const previous: ApiKeyIdentity = { ...identity, scopes: new Set(row.scopes.filter((scope) => !NOT_HELD_BY_PREVIOUS_SECRETS.has(scope))), previousSecret: true, secretHash: row.previous_key_hash };
    secrets.push([row.previous_key_hash.toString('hex'), { identity: previous, until: Math.min(expiresAt, endOf(row.previous_expires_at)) }]);
  }
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
   * Reads the key `id` again now: after a write to it made by this instance, so that its
   * next request sees it (other instances follow by NOTIFY, within milliseconds).
   */
  refresh(id: number): Promise<void>;
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
  // The accepted secrets by their hashes in hex, and each key's hashes, so that one key's
  // change replaces its entries alone.
  const cache = new Map<string, Accepted>();
  const hashesOf = new Map<number, string[]>();
  // Tokens already accepted, with their hashes, so the hot path skips the hash (the rate
  // limiter and authentication both ask); what a token is worth is read from the cache each
  // time, so a change to its key needs nothing here. Only accepted ones: each is an issued
  // key (47 bytes), so this holds at most CHECKED_MAX of them however large or numerous
  // the tokens clients send; refused tokens are hashed again each time rather than kept.
  let checked = new Map<string, string>();
  const CHECKED_MAX = 10_000;
  let listener: pg.Client | undefined;
  let live = false;
  let closed = false;

  function forget(id: number): void {
    for (const hex of hashesOf.get(id) ?? []) cache.delete(hex);
    hashesOf.delete(id);
  }
  function remember(row: KeySecrets): void {
    const secrets = acceptedSecrets(row);
    for (const [hex, accepted] of secrets) cache.set(hex, accepted);
    hashesOf.set(row.id, secrets.map(([hex]) => hex));
  }

  // What the next reload reads: every key, or the keys named since the last one. At most one
  // reload is in flight, and the changes notified meanwhile wait for the next: a key's row is
  // always read after the notification of its change arrived, so after the change committed.
  let wantAll = false;
  const wanted = new Set<number>();
  let reloading: Promise<void> | undefined;
  /** Beyond this many keys named at once, one read of them all is cheaper. */
  const READ_ALL_FROM = 500;

  async function readWanted(): Promise<void> {
    try {
      await readWantedOnce();
    } catch (error) {
      // What was taken and not read is read with everything by the next reload.
      wantAll = true;
      throw error;
    }
  }
  async function readWantedOnce(): Promise<void> {
    while (wantAll || wanted.size > 0) {
      if (wantAll || wanted.size > READ_ALL_FROM) {
        wantAll = false;
        wanted.clear();
        const rows = await apiKeys.active();
        cache.clear();
        hashesOf.clear();
        for (const row of rows) remember(row);
        continue;
      }
      const ids = [...wanted];
      wanted.clear();
      const rows = await apiKeys.activeByIds(ids);
      for (const id of ids) forget(id);
      for (const row of rows) remember(row);
    }
  }

  /** Reads again every key (`all`) or the keys named; resolves once they are read. */
  function reload(change: { all: true } | { ids: readonly number[] }): Promise<void> {
    if ('all' in change) wantAll = true;
    else for (const id of change.ids) wanted.add(id);
    // One in flight reads, in its loop, what was asked for while it ran; a caller that asks
    // meanwhile waits for that one, then for one more pass if its ids were taken too late.
    const run = (): Promise<void> => {
      reloading ??= readWanted().finally(() => {
        reloading = undefined;
      });
      return reloading;
    };
    return run().then(() => (wantAll || wanted.size > 0 ? run() : undefined));
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
    client.on('notification', (message: pg.Notification) => {
      const id = Number(message.payload);
      const change = message.payload && Number.isSafeInteger(id) ? { ids: [id] } : { all: true as const };
      reload(change).catch((error: unknown) => {
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
      await reload({ all: true });
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
    async refresh(id: number) {
      // Not live: every check asks the database, which already has the change.
      if (!live) return;
      await reload({ ids: [id] }).catch((error: unknown) => log.warn({ err: error }, 'api key cache: reading a changed key failed; the listener will read it'));
    },
    async verify(key: string, now = Date.now()) {
      // Far longer than any key we issue: refused without hashing up to 16 KiB of it.
      if (key.length > MAX_KEY_LENGTH) return undefined;
      if (!live) return fromDatabase(key, now);
      let hex = checked.get(key);
      let accepted = hex === undefined ? undefined : cache.get(hex);
      if (accepted === undefined) {
        hex = hashApiKey(key).toString('hex');
        accepted = cache.get(hex);
        if (accepted === undefined) return undefined;
        if (checked.size >= CHECKED_MAX) checked = new Map();
        checked.set(key, hex);
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
