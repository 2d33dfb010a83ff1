// API keys: generated here, stored as SHA-256 hashes, checked against an in-process cache
// so the hot path costs no database round trip. The cache follows the table through
// LISTEN/NOTIFY (a trigger notifies on any change), so a revoked key stops working on
// every instance within milliseconds. While the listener is down the cache cannot be
// trusted, and each check asks the database instead.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { ApiKeysRepository } from '../db/api-keys.js';

const KEY_PREFIX = 'ask_';
const CHANNEL = 'api_keys_changed';
/** Issued keys are 47 characters; room is left for a longer format. */
const MAX_KEY_LENGTH = 256;

export interface ApiKeyIdentity {
  id: number;
  name: string;
}

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

interface Logger {
  warn: (obj: object, msg: string) => void;
  info: (msg: string) => void;
}

export interface ApiKeyVerifier {
  /** The key's identity, or undefined when it is unknown or revoked. */
  verify(key: string): Promise<ApiKeyIdentity | undefined>;
  close(): Promise<void>;
}

export async function createApiKeyVerifier(options: {
  apiKeys: ApiKeysRepository;
  databaseUrl: string;
  log: Logger;
  /** Pause before reconnecting the listener after it drops. */
  reconnectDelayMs?: number;
}): Promise<ApiKeyVerifier> {
  const { apiKeys, databaseUrl, log } = options;
  const reconnectDelayMs = options.reconnectDelayMs ?? 500;
  let cache = new Map<string, ApiKeyIdentity>();
  // Tokens already accepted against the current cache, so the hot path skips the hash (the
  // rate limiter and authentication both ask). Only accepted ones: each is an issued key
  // (47 bytes), so this holds at most CHECKED_MAX of them however large or numerous the
  // tokens clients send. Refused tokens are hashed again each time rather than kept:
  // keeping them let 7,000 distinct 15 KB bogus tokens pin 90 MiB. Cleared with every reload.
  let checked = new Map<string, ApiKeyIdentity>();
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
        cache = new Map(rows.map((r) => [r.hash.toString('hex'), { id: r.id, name: r.name }]));
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

  /** Connects, listens and loads the keys; on any failure, retries later. True once live. */
  async function connect(): Promise<boolean> {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: 'animal-store-api:api-keys', connectionTimeoutMillis: 2000 });
    let dropped = false;
    const drop = (): void => {
      if (dropped) return;
      dropped = true;
      if (listener === client) listener = undefined;
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
      live = true;
      return true;
    } catch (error) {
      if (!closed) log.warn({ err: error }, 'api key listener: not connected, checking keys against the database until it is');
      drop();
      return false;
    }
  }

  await connect();

  return {
    async verify(key: string) {
      // Far longer than any key we issue: refused without hashing up to 16 KiB of it.
      if (key.length > MAX_KEY_LENGTH) return undefined;
      if (!live) return apiKeys.findActive(hashApiKey(key));
      const known = checked.get(key);
      if (known !== undefined) return known;
      const identity = cache.get(hashApiKey(key).toString('hex'));
      if (identity === undefined) return undefined;
      if (checked.size >= CHECKED_MAX) checked = new Map();
      checked.set(key, identity);
      return identity;
    },
    async close() {
      closed = true;
      live = false;
      clearTimeout(reconnectTimer);
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
