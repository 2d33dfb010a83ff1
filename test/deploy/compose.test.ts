// docker-compose.yml, .env.example and the Dockerfile agree with the service's
// configuration schema. (No Docker engine runs on our machines, so consistency is
// checked by reading the files.)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configSchema, loadConfig } from '../../src/config.js';
import { root } from '../process.js';

type Json = Record<string, any>;
const compose = parse(readFileSync(`${root}/docker-compose.yml`, 'utf8')) as Json;
const envExample = readFileSync(`${root}/.env.example`, 'utf8');
const dockerfile = readFileSync(`${root}/Dockerfile`, 'utf8');
const settings = Object.keys(configSchema.properties);

describe('deployment files', () => {
  it('the stack has postgres, redis, a one-shot migrate and the api', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis']);
    expect(compose.services.postgres.image).toMatch(/^postgres:1[6-9]/);
    expect(compose.services.postgres.volumes[0]).toMatch(/^pgdata:/);
    expect(Object.keys(compose.volumes)).toContain('pgdata');
    expect(compose.services.migrate.command).toEqual(['node', 'dist/src/cli/migrate.js']);
    expect(compose.services.migrate.restart).toBe('no');
  });

  it.each(['postgres', 'redis'])('%s has a health check', (service) => {
    expect(compose.services[service].healthcheck.test.length).toBeGreaterThan(1);
  });

  it('the api starts after postgres and redis are healthy and the migration is done', () => {
    expect(compose.services.api.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
      migrate: { condition: 'service_completed_successfully' },
    });
    expect(compose.services.api.environment.MIGRATE_ON_START).toBe('false');
  });

  it('the api environment is a valid configuration, and its port is the one published', () => {
    const environment = compose.services.api.environment as Record<string, string>;
    for (const name of Object.keys(environment)) expect(settings, name).toContain(name);
    const config = loadConfig(environment);
    expect(compose.services.api.ports).toEqual([`${config.PORT}:${config.PORT}`]);
    expect(config.DATABASE_URL).toBe(compose.services.migrate.environment.DATABASE_URL);
    const { POSTGRES_USER: user, POSTGRES_PASSWORD: password, POSTGRES_DB: db } = compose.services.postgres.environment;
    expect(config.DATABASE_URL).toBe(`postgres://${user}:${password}@postgres:5432/${db}`);
  });

  it('.env.example names every setting the service reads, once, commented, with its default or marked "no default"', () => {
    const lines = envExample.split('\n');
    const entries = lines.flatMap((line, i) => {
      const m = /^# ([A-Z][A-Z0-9_]+)=(.*)$/.exec(line);
      return m ? [{ name: m[1] as string, value: m[2] as string, note: lines[i - 1] ?? '' }] : [];
    });
    expect(entries.map((e) => e.name).sort()).toEqual([...settings].sort());
    // Nothing is set: a copy changes nothing until a line is uncommented (a container's .env
    // with HOST=127.0.0.1 would override the image's 0.0.0.0).
    expect(lines.filter((line) => /^\s*[A-Z][A-Z0-9_]*=/.test(line))).toEqual([]);
    const defaults = loadConfig({}) as unknown as Json;
    for (const { name, value, note } of entries) {
      const schema = (configSchema.properties as Json)[name];
      if (schema.default === undefined) {
        expect(note, `${name} has no default, and the line above it says so`).toMatch(/^# No default\b/);
        continue;
      }
      expect(note, name).not.toMatch(/no default/i);
      // The value as the service reads it (integers, booleans), against the schema's default.
      const read = (loadConfig({ [name]: value }) as unknown as Json)[name];
      expect(name === 'DATA_DIR' ? path.resolve(root, read) : read, `${name}=${value}`).toEqual(defaults[name]);
    }
    // Every value, defaults and examples together, is a valid configuration.
    expect(() => loadConfig(Object.fromEntries(entries.map((e) => [e.name, e.value])))).not.toThrow();
  });

  it('the Dockerfile runs the built server as a non-root user, with a health check on /healthz', () => {
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/healthz/);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/src\/server\.js"\]$/m);
    expect(dockerfile).toMatch(/^COPY migrations migrations$/m);
  });
});
