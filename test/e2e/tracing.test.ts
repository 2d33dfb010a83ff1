// Tracing, through what an operator's collector receives: the service runs with the standard
// OTEL_* variables pointing at an OTLP/HTTP receiver on 127.0.0.1 (JSON encoding, so that the
// test reads it without a protobuf decoder), a client sends a createPet with its own W3C
// `traceparent`, and the pet's webhook delivery goes to a receiver on 127.0.0.1. Then two
// collectors that fail: one refusing connections, one holding every export open. Requests are
// answered as before, and /metrics counts the spans dropped.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, createPool } from '../../src/db/pool.js';
import { createApiKey, createTestDatabase } from '../helper.js';
import { startServer, within, WAIT_MS, type ServerProcess } from '../process.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { NATS_URL, requires } from '../support/requires.js';

// The NATS relay too, where the machine has NATS: a stream and subjects of this run's own.
const haveNats = await requires('nats', 'test/e2e/tracing.test.ts (the trace context of NATS messages)');
const run = randomBytes(4).toString('hex');
const STREAM = `ANIMAL_STORE_EVENTS_TRACING_${run}`;
const PREFIX = `animal-store-tracing-${run}.events`;
let nc: NatsConnection | undefined;
let jsm: JetStreamManager | undefined;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
}
interface Collector {
  url: string;
  spans: OtlpSpan[];
  close: () => Promise<void>;
}

/** An OTLP/HTTP JSON receiver (POST /v1/traces) on 127.0.0.1; `hang` holds every request open. */
async function startCollector(hang = false): Promise<Collector> {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((request, response) => {
    if (hang) return;
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on: connections to it are refused. */
async function refusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const BASE = {
  RATE_LIMIT_MAX: '10000000',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '100',
  METRICS: 'open',
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '100',
};

const attribute = (span: OtlpSpan, key: string): OtlpValue | undefined => span.attributes?.find((a) => a.key === key)?.value;
const valuesOf = (span: OtlpSpan): string[] => (span.attributes ?? []).map((a) => String(a.value.stringValue ?? a.value.intValue ?? a.value.boolValue ?? ''));

let drops: (() => Promise<void>)[] = [];
let db: ReturnType<typeof createPool>;
let key: string;
let otherKey: string;
let collector: Collector;
let hanging: Collector;
let receiver: Receiver;
let traced: ServerProcess;
let refusing: ServerProcess;
let stalled: ServerProcess;

beforeAll(async () => {
  // The failing collectors' services on a database of their own: the traced service's
  // events must be delivered by the traced service.
  const [database, other] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  drops = [database.drop, other.drop];
  db = createPool({ DATABASE_URL: database.url, DB_POOL_MAX: 2, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
  key = (await createApiKey(db, 'tracing')).key;
  const otherDb = createPool({ DATABASE_URL: other.url, DB_POOL_MAX: 1, DB_CONNECT_TIMEOUT_MS: 10_000, DB_STATEMENT_TIMEOUT_MS: 60_000 });
  otherKey = (await createApiKey(otherDb, 'tracing')).key;
  await closePool(otherDb);
  [collector, hanging, receiver] = await Promise.all([startCollector(), startCollector(true), startReceiver()]);
  const env = { ...BASE, DATABASE_URL: database.url };
  const otherEnv = { ...BASE, DATABASE_URL: other.url };
  [traced, refusing, stalled] = await Promise.all([
    startServer({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, ...(haveNats ? { EVENTS_NATS_URL: NATS_URL, EVENTS_NATS_STREAM: STREAM, EVENTS_NATS_SUBJECT_PREFIX: PREFIX } : {}) }),
    startServer({ ...otherEnv, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await refusedPort()}`, OTEL_EXPORTER_OTLP_TIMEOUT: '1000' }),
    // A queue of 32 spans, exports that wait up to 2 s: the queue fills while they hang.
    startServer({ ...otherEnv, OTEL_EXPORTER_OTLP_ENDPOINT: hanging.url, OTEL_EXPORTER_OTLP_TIMEOUT: '2000', OTEL_BSP_EXPORT_TIMEOUT: '2000', OTEL_BSP_MAX_QUEUE_SIZE: '32' }),
  ]);
  if (haveNats) {
    nc = await connect({ servers: NATS_URL, ignoreClusterUpdates: true });
    jsm = await nc.jetstreamManager();
  }
}, 120_000);

afterAll(async () => {
  await jsm?.streams.delete(STREAM).catch(() => {});
  await nc?.close();
  await Promise.all([traced, refusing, stalled].map((s) => s?.stop('SIGKILL')));
  await Promise.all([collector, hanging, receiver].map((c) => c?.close()));
  if (db) await closePool(db);
  await Promise.all(drops.map((d) => d()));
});

const call = (server: ServerProcess, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server === traced ? key : otherKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('a traced createPet', () => {
  it('continues the caller\'s trace: the server span with its operationId, the SQL spans under it without values, the webhook delivery, the trace id in the access log', async () => {
    const created = await call(traced, 'POST', '/v1/webhook-endpoints', { url: `${receiver.url}/hooks`, eventTypes: ['pet.created'] });
    expect(created.status, await created.clone().text()).toBe(201);

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const name = 'Traced-Secret-Name-7f3a';
    const response = await call(traced, 'POST', '/v1/pets', { name, categoryId: 1, status: 'available' }, { traceparent: `00-${traceId}-${callerSpan}-01` });
    expect(response.status, await response.clone().text()).toBe(201);
    const pet = (await response.json()) as { id: number };

    // The delivery reaches the receiver carrying the trace, and its span reaches the collector.
    await within(WAIT_MS, async () => receiver.received.some((r) => r.body.includes(`"id":${pet.id}`)));
    await within(WAIT_MS, async () => collector.spans.some((s) => s.traceId === traceId && s.name === 'webhook delivery'));
    const delivered = receiver.received.find((r) => r.body.includes(`"id":${pet.id}`));
    expect(delivered?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const trace = collector.spans.filter((s) => s.traceId === traceId);
    // The server span: a child of the caller's span, named by route and operationId.
    const server = trace.filter((s) => s.parentSpanId === callerSpan);
    expect(server).toHaveLength(1);
    const [request] = server as [OtlpSpan];
    expect(request.name).toBe('POST /v1/pets createPet');
    expect(request.kind).toBe(2); // SERVER
    expect(attribute(request, 'openapi.operation_id')?.stringValue).toBe('createPet');
    expect(Number(attribute(request, 'http.response.status_code')?.intValue)).toBe(201);

    // The SQL spans: under the server span, named by the statement's name, without values.
    const sql = trace.filter((s) => s.name.startsWith('pg.query:'));
    expect(sql.length).toBeGreaterThan(0);
    const inRequest = sql.filter((s) => s.parentSpanId === request.spanId);
    expect(inRequest.map((s) => s.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^pg\.query:pets-insert/)]));
    for (const span of sql) {
      expect(valuesOf(span).some((v) => v.includes(name))).toBe(false);
      expect(span.attributes?.some((a) => a.key.startsWith('db.query.parameter') || a.key === 'db.postgresql.values')).toBe(false);
    }

    // The delivery: a client span of the same trace, its parent a span of the request's.
    const delivery = trace.find((s) => s.name === 'webhook delivery') as OtlpSpan;
    expect(delivery.kind).toBe(3); // CLIENT
    expect(trace.some((s) => s.spanId === delivery.parentSpanId)).toBe(true);
    expect(Number(attribute(delivery, 'http.response.status_code')?.intValue)).toBe(200);

    // The event's NATS message carries a traceparent of the same trace.
    if (jsm) {
      const streams = jsm.streams;
      const published = async () => {
        const message = await streams.getMessage(STREAM, { last_by_subj: `${PREFIX}.pet.created` }).catch(() => undefined);
        return message?.string().includes(`"id":${pet.id}`) ? message : undefined;
      };
      await within(WAIT_MS, async () => (await published()) !== undefined, 100);
      expect((await published())?.header?.get('traceparent')).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      await within(WAIT_MS, async () => collector.spans.some((s) => s.traceId === traceId && s.name === 'nats publish'));
    }

    // The access log's line for the request carries the trace id.
    await within(WAIT_MS, async () => traced.output().includes(`"traceId":"${traceId}"`));
    const line = traced.output().split('\n').find((l) => l.includes(`"traceId":"${traceId}"`));
    expect(line).toMatch(/"method":"POST","url":"\/v1\/pets"/);
  });

  it('starts a trace of its own for a request without traceparent, and follows OTEL_TRACES_SAMPLER', async () => {
    const before = new Set(collector.spans.map((s) => s.traceId));
    expect((await call(traced, 'GET', '/v1/pets?limit=1')).status).toBe(200);
    await within(WAIT_MS, async () => collector.spans.some((s) => !before.has(s.traceId) && s.name === 'GET /v1/pets listPets'));
    const span = collector.spans.find((s) => !before.has(s.traceId) && s.name === 'GET /v1/pets listPets') as OtlpSpan;
    expect(span.parentSpanId ?? '').toBe('');
    // A caller that did not sample its trace (flags 00): the parent-based default keeps it unsampled.
    const unsampled = '5bf92f3577b34da6a3ce929d0e0e4736';
    expect((await call(traced, 'GET', '/v1/pets?limit=1', undefined, { traceparent: `00-${unsampled}-00f067aa0ba902b7-00` })).status).toBe(200);
    const marker = 'a3ce929d0e0e4736a3ce929d0e0e4736';
    expect((await call(traced, 'GET', '/v1/pets?limit=1', undefined, { traceparent: `00-${marker}-00f067aa0ba902b7-01` })).status).toBe(200);
    await within(WAIT_MS, async () => collector.spans.some((s) => s.traceId === marker));
    expect(collector.spans.some((s) => s.traceId === unsampled)).toBe(false);
  });
});

describe('a collector that fails', () => {
  const metric = async (server: ServerProcess, reason: string): Promise<number> => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const match = new RegExp(`^animal_store_trace_spans_dropped_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(text);
    return match ? Number(match[1]) : Number.NaN;
  };

  it('refusing connections: every request is answered, and the spans of failed exports are counted', async () => {
    for (let i = 0; i < 20; i++) expect((await call(refusing, 'POST', '/v1/pets', { name: `Refused ${i}`, categoryId: 1 })).status).toBe(201);
    await within(WAIT_MS, async () => (await metric(refusing, 'export_failed')) > 0, 100);
  });

  it('holding every export open: every request is answered, and spans that find the queue full are dropped and counted', async () => {
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => call(stalled, 'POST', '/v1/pets', { name: `Stalled ${i}`, categoryId: 1 }).then((r) => r.status)));
    expect(answers.every((s) => s === 201)).toBe(true);
    await within(WAIT_MS, async () => (await metric(stalled, 'queue_full')) > 0, 100);
    // Still answering while the exports hang.
    expect((await call(stalled, 'GET', '/v1/pets?limit=5')).status).toBe(200);
  });
});
