// The client as a client team gets it: `npm pack` of client/ (its prepack builds it), then
// `npm install <tarball>` in an empty project, then that project's own code, importing
// '@animal-store/client' by name: a TypeScript file compiled against the installed
// declarations, and a plain Node ESM script (client-package/consumer.mjs) that calls every
// operation of the contract against a real service and reports on each.
//
// One case per operation of openapi/v1.yaml, by name: the script's own case for it, or for an
// operation it has none for, the derived one (the package's call() sends the contract's
// method and path, and the service answers it without a 5xx).
//
// The install needs the package's dependencies, openapi-fetch and standardwebhooks (and
// theirs). npm takes them from its cache, or else the registry. On a machine with neither
// (scripts/bare-machine.sh has no network) and CI unset, they are packed from this
// repository's node_modules and installed beside the tarball, with one line saying so; with
// CI=true that fallback is refused and the case fails.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createTestDatabase } from '../helper.js';
import { apikey, root, run as runProgram, startServer, type RunResult, type ServerProcess } from '../process.js';

const contract = parse(readFileSync(path.join(root, 'openapi/v1.yaml'), 'utf8')) as {
  info: { version: string };
  paths: Record<string, Record<string, { operationId?: string }>>;
};
// Each operation of the contract with its method and path (the script checks what an
// operation without a case of its own sends against them).
const contractRequests = Object.entries(contract.paths).flatMap(([where, item]) =>
  Object.entries(item).flatMap(([method, o]) => (o?.operationId ? [{ operationId: o.operationId, method: method.toUpperCase(), path: where }] : [])),
);
const contractOperations = contractRequests.map((o) => o.operationId);
const fixtures = path.join(root, 'test/e2e/client-package');
const clientPackage = JSON.parse(readFileSync(path.join(root, 'client/package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string> };

const folder = mkdtempSync(path.join(tmpdir(), 'animal-store-client-package-'));
const project = path.join(folder, 'consumer');

/**
 * The environment of the npm and node children: without what `npm test` sets about this
 * repository (npm_config_local_prefix would point npm at it, npm_package_* describe it);
 * npm's other settings (cache, cafile, registry) stay.
 */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const dropped = /^(npm_config_local_prefix|npm_package_.*|npm_lifecycle_.*|npm_command|NODE_OPTIONS|VITEST.*|DATABASE_URL|TEST_DATABASE_URL)$/i;
  for (const [name, value] of Object.entries(process.env)) if (!dropped.test(name)) env[name] = value;
  return { ...env, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false', ...extra };
}

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = childEnv()): Promise<RunResult> => runProgram(command, args, { cwd, env });
const succeeded = (what: string, result: RunResult): RunResult => {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
};

/** Packs a package folder with `npm pack` run in it (its prepack runs, unless `ignoreScripts`); resolves with the tarball's path. */
async function pack(dir: string, destination: string, ignoreScripts = false): Promise<string> {
  const before = new Set(readdirSync(destination));
  succeeded(`npm pack in ${dir}`, await run('npm', ['pack', '--pack-destination', destination, ...(ignoreScripts ? ['--ignore-scripts'] : [])], dir));
  const made = readdirSync(destination).filter((f) => f.endsWith('.tgz') && !before.has(f));
  expect(made).toHaveLength(1);
  return path.join(destination, made[0] as string);
}

/** The client's dependencies and theirs, as this repository's node_modules holds them (the offline fallback). */
const DEPENDENCY_TREE = ['openapi-fetch', 'openapi-typescript-helpers', 'standardwebhooks', '@stablelib/base64', 'fast-sha256'];

let tarball: string;
let installedFrom: 'npm' | 'this repository';
let database: { url: string; drop: () => Promise<void> };
let server: ServerProcess;
let limited: ServerProcess;
let key: string;

beforeAll(async () => {
  database = await createTestDatabase();
  key = (await apikey(['create', 'client package'], database.url)).stdout.trim();
  // Started while npm packs and installs. The second serves one request per key per
  // second, for the retry case; counted in its own memory (no Redis), apart from the first.
  const services = Promise.all([
    // WEBHOOK_ALLOW_PRIVATE: the consumer's webhook endpoints point at 127.0.0.1.
    startServer({ DATABASE_URL: database.url, REDIS_URL: undefined, WEBHOOK_ALLOW_PRIVATE: 'true' }),
    startServer({ DATABASE_URL: database.url, REDIS_URL: undefined, RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '1000' }),
  ]);
  services.catch(() => undefined);

  tarball = await pack(path.join(root, 'client'), folder);
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`);
  const install = ['install', '--no-save', '--fetch-retries=0', '--fetch-timeout=30000'];
  const fromNpm = await run('npm', [...install, '--prefer-offline', tarball], project);
  if (fromNpm.code === 0) {
    installedFrom = 'npm';
  } else {
    if (process.env.CI === 'true') throw new Error(`npm install ${tarball} failed (CI=true: no fallback):\n${fromNpm.stderr}`);
    const dependencies = [];
    for (const name of DEPENDENCY_TREE) dependencies.push(await pack(path.join(root, 'node_modules', name), folder, true));
    succeeded('npm install --offline', await run('npm', [...install, '--offline', tarball, ...dependencies], project));
    installedFrom = 'this repository';
    const why = /npm error code (\S+)/.exec(fromNpm.stderr)?.[1] ?? `exit ${fromNpm.code}`;
    process.stderr.write(`client package test: npm could not get ${DEPENDENCY_TREE.join(', ')} from its cache or the registry (${why}); installed them packed from this repository's node_modules instead.\n`);
  }
  [server, limited] = await services;
}, 300_000);

afterAll(async () => {
  await Promise.all([server?.stop('SIGTERM'), limited?.stop('SIGTERM')]);
  await database?.drop();
  rmSync(folder, { recursive: true, force: true });
});

describe('the client package', () => {
  it('is packed with its build, its declarations and its README, and nothing else', async () => {
    const listed = succeeded('tar', await run('tar', ['-tzf', tarball], folder)).stdout.trim().split('\n').sort();
    expect(listed).toEqual(expect.arrayContaining(['package/package.json', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/generated/v1.d.ts']));
    expect(listed.filter((f) => !/^package\/(package\.json|README\.md|dist\/.+\.(js|d\.ts))$/.test(f))).toEqual([]);
  });

  it('is versioned after the contract it was generated from (same major.minor)', () => {
    expect(clientPackage.version.split('.').slice(0, 2)).toEqual(contract.info.version.split('.').slice(0, 2));
  });

  it("installs with its two dependencies: openapi-fetch in the root's range, standardwebhooks at the root's exact version", () => {
    const versionIn = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    expect(versionIn(path.join(project, 'node_modules/@animal-store/client/package.json'))).toBe(clientPackage.version);
    expect(Object.keys(clientPackage.dependencies)).toEqual(['openapi-fetch', 'standardwebhooks']);
    const rootDependencies = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
    const rootPinned = rootDependencies['openapi-fetch'];
    expect(clientPackage.dependencies['openapi-fetch']).toBe(`^${rootPinned}`);
    expect(versionIn(path.join(project, 'node_modules/openapi-fetch/package.json')).split('.').slice(0, 2)).toEqual(rootPinned?.split('.').slice(0, 2));
    expect(clientPackage.dependencies.standardwebhooks).toBe(rootDependencies.standardwebhooks);
    expect(versionIn(path.join(project, 'node_modules/standardwebhooks/package.json'))).toBe(rootDependencies.standardwebhooks);
    expect(installedFrom).toMatch(/npm|this repository/);
  });

  it('type-checks a TypeScript consumer against the installed declarations (strict, no @types/node)', async () => {
    copyFileSync(path.join(fixtures, 'consumer-types.ts'), path.join(project, 'consumer-types.ts'));
    const tsconfig = {
      compilerOptions: { strict: true, noEmit: true, target: 'ES2022', lib: ['ES2023', 'DOM'], types: [], module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: false },
      files: ['consumer-types.ts'],
    };
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    const compiled = await run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project], project);
    expect(compiled.stdout + compiled.stderr).toBe('');
    expect(compiled.code).toBe(0);
  });

  describe('a plain Node ESM script using the installed package, against a running service', () => {
    let report: { operations: Record<string, string>; behaviours: Record<string, string> };
    beforeAll(async () => {
      copyFileSync(path.join(fixtures, 'consumer.mjs'), path.join(project, 'consumer.mjs'));
      const env = childEnv({ BASE_URL: `${server.url}/v1`, LIMITED_URL: `${limited.url}/v1`, API_KEY: key, OPERATIONS: JSON.stringify(contractRequests) });
      const result = succeeded('node consumer.mjs', await run(process.execPath, ['consumer.mjs'], project, env));
      report = JSON.parse(result.stdout) as typeof report;
    }, 180_000);

    it('reports on exactly the operations of the contract', () => {
      expect(Object.keys(report.operations).sort()).toEqual([...contractOperations].sort());
    });

    it.each(contractOperations)('%s: the client has a method, and it answers as the contract says', (operation) => {
      expect(report.operations[operation]).toBe('ok');
    });

    it.each([
      'a repeat with the same Idempotency-Key replays the answer and adds nothing',
      'a 429 is retried after its Retry-After, a keyed createPet included, and thrown when retries are off',
      'createApiKey is never repeated, even with retries on: a 429 is thrown and no second key is minted',
      'verifyWebhook returns the event of a delivery signed by standardwebhooks with the whsec_ secret, and refuses a tampered one',
    ])(
      '%s',
      (behaviour) => {
        expect(report.behaviours[behaviour]).toBe('ok');
      },
    );
  });
});
