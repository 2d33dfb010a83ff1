// Configuration comes only from the environment and is validated once, at start-up:
// a wrong value stops the process with one line that names the variable.
import { existsSync } from 'node:fs';
import path from 'node:path';
import envSchema from 'env-schema';
import { projectRoot } from './paths.js';

export interface Config {
  /** Unset: an embedded PostgreSQL in DATA_DIR (development only). */
  DATABASE_URL?: string;
  /** Where the embedded PostgreSQL keeps its data. */
  DATA_DIR: string;
  /** Port of the embedded PostgreSQL; 0 picks a free one. */
  EMBEDDED_PG_PORT: number;
  HOST: string;
  PORT: number;
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Connections in this instance's pool. */
  DB_POOL_MAX: number;
  /** How long a request waits for a connection before answering 503. */
  DB_CONNECT_TIMEOUT_MS: number;
  /** Server-side limit on any one statement. */
  DB_STATEMENT_TIMEOUT_MS: number;
  /** On SIGTERM/SIGINT, how long in-flight requests may take before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: number;
  /** Whole-request limit (node's server.requestTimeout). */
  REQUEST_TIMEOUT_MS: number;
  /** Idle keep-alive connections are closed after this. */
  KEEP_ALIVE_TIMEOUT_MS: number;
  /**
   * The service's public origin (`https://api.example.com`), listed first in the served
   * contract. Unset: derived from each request's Host.
   */
  PUBLIC_URL?: string;
  /** Requests per RATE_LIMIT_WINDOW_MS for each API key. */
  RATE_LIMIT_MAX: number;
  /** Requests per window for each client address without a valid key. */
  RATE_LIMIT_ANONYMOUS_MAX: number;
  RATE_LIMIT_WINDOW_MS: number;
  /** Shares rate-limit counts between instances; unset: counted in this process. */
  REDIS_URL?: string;
  /** Prefix of this deployment's keys in Redis (several deployments may share one Redis). */
  REDIS_PREFIX: string;
  /** Comma-separated origins allowed by CORS; unset: CORS is off. */
  CORS_ORIGINS?: string;
  /** Shed load (503) while the event loop lags more than this; 0 turns it off. */
  MAX_EVENT_LOOP_DELAY_MS: number;
  /** Apply migrations at start-up (under node-pg-migrate's advisory lock). */
  MIGRATE_ON_START: boolean;
  /** A streaming replica for listPets/getPet; unset: every query goes to DATABASE_URL. */
  DATABASE_READ_URL?: string;
  /** After a write, the same API key reads from the primary for this long (read-your-writes). */
  READ_YOUR_WRITES_MS: number;
  /** An export (exportPets) whose client takes nothing for this long is cut off, its connection and snapshot given back. */
  EXPORT_IDLE_TIMEOUT_MS: number;
  /** The largest body createPetImport takes, in bytes; a larger one is 413 as soon as it passes this. */
  IMPORT_MAX_BYTES: number;
  /** Rows an import reads and commits at a time (each batch one transaction). */
  IMPORT_BATCH_ROWS: number;
  /** How often each instance looks for an import to run (one submitted to it starts at once). */
  IMPORT_POLL_MS: number;
  /** `/metrics` (Prometheus): off, open to anyone who reaches the port, or behind METRICS_TOKEN. */
  METRICS: 'off' | 'open' | 'token';
  /** Bearer token for `/metrics` when METRICS=token. */
  METRICS_TOKEN?: string;
  /** How long a placed order holds its pet before it expires, in seconds. */
  ORDER_HOLD_SECONDS: number;
  /** How often each instance writes the API keys' last use (lastUsedAt is at most this stale). */
  API_KEY_USAGE_FLUSH_MS: number;
  /** The most API keys in force (neither revoked nor expired) createApiKey allows. */
  API_KEY_LIMIT: number;
  /** How long events are kept, in days (listEvents, getEvent; older ones are deleted). */
  EVENT_RETENTION_DAYS: number;
  /** NATS with JetStream (`nats://host:port`) to publish every event to; unset: no relay. */
  EVENTS_NATS_URL?: string;
  /** The JetStream stream the relay makes if missing, over `<EVENTS_NATS_SUBJECT_PREFIX>.>`. */
  EVENTS_NATS_STREAM: string;
  /** Events are published on `<prefix>.<type>`; deployments sharing one NATS each take their own. */
  EVENTS_NATS_SUBJECT_PREFIX: string;
  /** Webhook endpoints may be http, and deliveries may call non-public addresses (development and tests only). */
  WEBHOOK_ALLOW_PRIVATE: boolean;
  /** How long a delivery attempt may take before it counts as failed (`timeout`). */
  WEBHOOK_TIMEOUT_MS: number;
  /** Seconds between a failed attempt and the next, comma-separated, the last repeated (test and development setting). */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: string;
  /** After this many seconds of failures, a message is given up and its endpoint disabled (test and development setting). */
  WEBHOOK_RETRY_WINDOW_SECONDS: number;
  /** Delivery attempts in flight at once in each instance. */
  WEBHOOK_CONCURRENCY: number;
  /** How often each instance looks for events to dispatch and deliveries that are due, when idle. */
  WEBHOOK_POLL_MS: number;
}

const integer = (def: number, minimum: number, maximum: number) => ({ type: 'integer', default: def, minimum, maximum });

export const configSchema = {
  type: 'object',
  properties: {
    DATABASE_URL: { type: 'string', pattern: '^postgres(ql)?://' },
    DATA_DIR: { type: 'string', minLength: 1, default: path.join(projectRoot, '.data') },
    EMBEDDED_PG_PORT: integer(0, 0, 65535),
    HOST: { type: 'string', default: '127.0.0.1', minLength: 1 },
    PORT: integer(3000, 0, 65535),
    LOG_LEVEL: { type: 'string', default: 'info', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    DB_POOL_MAX: integer(10, 1, 1000),
    DB_CONNECT_TIMEOUT_MS: integer(1000, 100, 60_000),
    DB_STATEMENT_TIMEOUT_MS: integer(5000, 100, 600_000),
    SHUTDOWN_TIMEOUT_MS: integer(10_000, 100, 600_000),
    REQUEST_TIMEOUT_MS: integer(30_000, 1000, 600_000),
    KEEP_ALIVE_TIMEOUT_MS: integer(72_000, 1000, 600_000),
    MIGRATE_ON_START: { type: 'boolean', default: true },
    RATE_LIMIT_MAX: integer(1000, 1, 10_000_000),
    RATE_LIMIT_ANONYMOUS_MAX: integer(60, 1, 10_000_000),
    RATE_LIMIT_WINDOW_MS: integer(60_000, 1000, 86_400_000),
    REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    REDIS_PREFIX: { type: 'string', default: 'animal-store:', pattern: '^[A-Za-z0-9:._-]{1,64}$' },
    CORS_ORIGINS: { type: 'string', pattern: '^https?://[^,\\s]+(,https?://[^,\\s]+)*$' },
    MAX_EVENT_LOOP_DELAY_MS: integer(1000, 0, 60_000),
    PUBLIC_URL: { type: 'string', pattern: '^https?://[^/]+$' },
    DATABASE_READ_URL: { type: 'string', pattern: '^postgres(ql)?://' },
    READ_YOUR_WRITES_MS: integer(5000, 0, 600_000),
    EXPORT_IDLE_TIMEOUT_MS: integer(60_000, 1000, 3_600_000),
    IMPORT_MAX_BYTES: integer(1024 * 1024 * 1024, 1024, 16 * 1024 * 1024 * 1024),
    IMPORT_BATCH_ROWS: integer(5000, 1, 50_000),
    IMPORT_POLL_MS: integer(1000, 50, 60_000),
    METRICS: { type: 'string', default: 'off', enum: ['off', 'open', 'token'] },
    METRICS_TOKEN: { type: 'string', minLength: 16, pattern: '^[A-Za-z0-9._~+/=-]+$' },
    ORDER_HOLD_SECONDS: integer(900, 1, 86_400),
    // At most a minute: the contract promises lastUsedAt at most a minute stale.
    API_KEY_USAGE_FLUSH_MS: integer(30_000, 50, 60_000),
    API_KEY_LIMIT: integer(1000, 1, 100_000),
    EVENT_RETENTION_DAYS: integer(30, 1, 3650),
    EVENTS_NATS_STREAM: { type: 'string', default: 'ANIMAL_STORE_EVENTS', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    EVENTS_NATS_SUBJECT_PREFIX: { type: 'string', default: 'animal-store.events', pattern: '^[A-Za-z0-9_-]{1,64}(\\.[A-Za-z0-9_-]{1,64}){0,7}$' },
    EVENTS_NATS_URL: { type: 'string', pattern: '^(nats|tls)://[^,\\s]+(,(nats|tls)://[^,\\s]+)*$' },
    WEBHOOK_ALLOW_PRIVATE: { type: 'boolean', default: false },
    WEBHOOK_TIMEOUT_MS: integer(10_000, 100, 60_000),
    // The Standard Webhooks schedule; each delay at most a day.
    WEBHOOK_RETRY_SCHEDULE_SECONDS: { type: 'string', default: '5,300,1800,7200,18000,36000', pattern: '^([0-9]{1,5})(,[0-9]{1,5}){0,19}$' },
    WEBHOOK_RETRY_WINDOW_SECONDS: integer(259_200, 1, 2_592_000),
    WEBHOOK_CONCURRENCY: integer(16, 1, 1000),
    WEBHOOK_POLL_MS: integer(250, 10, 60_000),
  },
} as const;

export class ConfigError extends Error {}

/**
 * Reads settings from a `.env` file into the environment, as `npm start` and the CLI do
 * before `loadConfig`: `ENV_FILE` names the file (empty: none), else `.env` in the project
 * root when there is one. A variable already in the environment wins over the file's.
 * Returns the file read, if any.
 */
export function readEnvFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = env.ENV_FILE ?? path.join(projectRoot, '.env');
  if (file === '' || (env.ENV_FILE === undefined && !existsSync(file))) return undefined;
  try {
    process.loadEnvFile(file);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ENV_FILE ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): give a readable file, or ENV_FILE= for none`);
  }
  return file;
}

/** Reads and validates the configuration; throws ConfigError with a one-line message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    const config = envSchema<Config>({ schema: configSchema, data: env, dotenv: false });
    if (config.METRICS === 'token' && !config.METRICS_TOKEN) throw new Error('METRICS=token needs METRICS_TOKEN (16 or more characters)');
    if (config.DATABASE_READ_URL && !config.DATABASE_URL) throw new Error('DATABASE_READ_URL needs DATABASE_URL (the primary)');
    return config;
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${describe(error)}`);
  }
}

interface SchemaError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: { allowedValues?: readonly unknown[] };
}

/**
 * env-schema says e.g. "env/PORT must be <= 65535": kept, minus the prefix. For an enum,
 * ajv says only "must be equal to one of the allowed values", so the values are added.
 */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const errors = (error as Error & { errors?: SchemaError[] }).errors;
  if (!errors?.length) return error.message.replace(/env\//g, '');
  return errors
    .map((e) => {
      const name = e.instancePath.replace(/^\//, '') || 'configuration';
      // An integer setting: the whole range, whichever bound (or the type) was broken.
      const property = (configSchema.properties as Record<string, { type?: string; minimum?: number; maximum?: number }>)[name];
      if (property?.type === 'integer' && ['type', 'minimum', 'maximum'].includes(e.keyword)) {
        return `${name} must be an integer from ${property.minimum} to ${property.maximum}`;
      }
      const allowed = e.keyword === 'enum' && e.params.allowedValues ? ` (${e.params.allowedValues.join(', ')})` : '';
      return `${name} ${e.message ?? 'is invalid'}${allowed}`;
    })
    .join(', ');
}
