// vitest globalSetup: the service compiled, one PostgreSQL server for the run, one template database migrated
// once, and every test file gets its own copy of it (test/helper.ts), so files are
// isolated from each other and run in parallel.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/db/migrate.js';
import { startTestServer } from './server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A URL to the server's maintenance database, for CREATE/DROP DATABASE. */
    adminUrl: string;
    /** The migrated template each test file copies. */
    templateDatabase: string;
  }
}

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Tests run the service and the CLI compiled, as `npm start` does (test/process.ts):
  // compiled here once, only when src/ or generated/ changed since the last build.
  execFileSync(process.execPath, ['scripts/build-when-changed.mjs'], { cwd: path.resolve(import.meta.dirname, '../..'), stdio: 'inherit' });
  const server = await startTestServer();
  const templateDatabase = `animal_store_tpl_${process.pid}`;
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateDatabase}`);
  await admin.query(`CREATE DATABASE ${templateDatabase}`);
  await migrate(databaseUrl(server.adminUrl, templateDatabase), { info: () => {} });
  await admin.end();

  project.provide('adminUrl', server.adminUrl);
  project.provide('templateDatabase', templateDatabase);

  return async () => {
    const client = new pg.Client({ connectionString: server.adminUrl });
    await client.connect();
    const leftovers = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`,
      [templateDatabase, `animal_store_t${process.pid}_%`],
    );
    for (const { datname } of leftovers.rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await client.end();
    await server.stop();
  };
}
