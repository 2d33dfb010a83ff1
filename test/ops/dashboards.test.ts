// The Grafana dashboard (ops/grafana/animal-store.json) and the Prometheus alert rules
// (ops/prometheus/alerts.yml) name only series the service exposes: the service is started
// as a process, answers a few requests, and every metric name in their PromQL is on its
// /metrics. The rules' syntax is promtool's to check (CI, .ci/run).
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { generateApiKey, hashApiKey } from '../../src/api-keys/verifier.js';
import { createTestDatabase } from '../helper.js';
import { root, startServer, type ServerProcess } from '../process.js';

const dashboardFile = `${root}/ops/grafana/animal-store.json`;
const rulesFile = `${root}/ops/prometheus/alerts.yml`;

/** The PromQL of the dashboard: every panel's targets, and the template variables' queries. */
function dashboardQueries(): string[] {
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
    templating: { list: { definition?: string }[] };
  };
  return [...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)), ...dashboard.templating.list.flatMap((v) => (v.definition ? [v.definition] : []))];
}

/** The PromQL of the rules: every rule's expression. */
function ruleQueries(): string[] {
  const rules = parse(readFileSync(rulesFile, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return rules.groups.flatMap((group) => group.rules.map((rule) => rule.expr));
}

/**
 * The metric names a PromQL expression reads: its identifiers outside string literals and
 * label matchers, that start with the service's prefix (functions, keywords and label names
 * do not).
 */
function metricNames(promql: string): string[] {
  const bare = promql.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""').replace(/\{[^}]*\}/g, '{}');
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((name) => name.startsWith('animal_store_'));
}

let database: { url: string; drop: () => Promise<void> };
let server: ServerProcess;
let exposition = '';

beforeAll(async () => {
  database = await createTestDatabase();
  const key = generateApiKey();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('INSERT INTO api_keys (name, key_hash) VALUES ($1, $2)', ['dashboards', hashApiKey(key)]);
  await client.end();
  server = await startServer({ DATABASE_URL: database.url, METRICS: 'open' });
  // A few requests, so that the request histogram has series.
  const auth = { authorization: `Bearer ${key}` };
  for (const path of ['/v1/pets', '/v1/store/inventory', '/v1/pets?limit=0', '/nope']) await (await fetch(`${server.url}${path}`, { headers: auth })).arrayBuffer();
  const response = await fetch(`${server.url}/metrics`);
  expect(response.status).toBe(200);
  exposition = await response.text();
}, 180_000);
afterAll(async () => {
  expect(await server?.stop('SIGTERM')).toBe(0);
  await database?.drop();
});

/** Each metric family on /metrics, by name, with its type (`# TYPE <name> <type>`). */
function families(): Map<string, string> {
  return new Map([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
}

/** Whether `name` is a series of the exposition: a family, or a histogram's or summary's own series. */
function exposed(name: string, types: Map<string, string>): boolean {
  if (types.has(name)) return true;
  const [, base, suffix] = /^(.*)_(bucket|count|sum)$/.exec(name) ?? [];
  const type = base === undefined ? undefined : types.get(base);
  return type === 'histogram' || (type === 'summary' && suffix !== 'bucket');
}

describe('the shipped dashboard and alert rules', () => {
  it('the tokenizer finds metric names, not functions, labels or label values', () => {
    expect(metricNames('histogram_quantile(0.99, sum by (operation, le) (rate(animal_store_a_bucket{status=~"animal_store_x", job="y"}[5m]))) / animal_store_b > 0')).toEqual(['animal_store_a_bucket', 'animal_store_b']);
  });

  it.each([
    ['the Grafana dashboard', dashboardFile, dashboardQueries],
    ['the Prometheus alert rules', rulesFile, ruleQueries],
  ])('every metric %s names is on /metrics', (_what, file, queries) => {
    const types = families();
    const named = [...new Set(queries().flatMap(metricNames))].sort();
    expect(named.length).toBeGreaterThan(3);
    expect(named.filter((name) => !exposed(name, types))).toEqual([]);
    // Nothing elsewhere in the file (an annotation's query, a description) names another.
    const anywhere = [...new Set([...readFileSync(file, 'utf8').matchAll(/animal_store_[a-zA-Z0-9_:]+/g)].map((m) => m[0]))];
    expect(anywhere.filter((name) => !exposed(name, types))).toEqual([]);
  });

  it('the dashboard covers errors, p99 by operation, the pool, the webhook queue and failures, job lag, and imports', () => {
    const named = new Set(dashboardQueries().flatMap(metricNames));
    for (const name of [
      'animal_store_http_request_duration_seconds_count',
      'animal_store_http_request_duration_seconds_bucket',
      'animal_store_db_pool_connections',
      'animal_store_db_pool_max_connections',
      'animal_store_webhook_messages',
      'animal_store_webhook_oldest_due_seconds',
      'animal_store_webhook_attempts_total',
      'animal_store_job_lag_seconds',
      'animal_store_job_runs_total',
      'animal_store_pet_import_rows_total',
      'animal_store_pet_imports_open',
      'animal_store_pet_imports_finished_total',
    ])
      expect(named, name).toContain(name);
  });
});
