// bench/latest.md: the last run of each bench, tracked in git. Every run writes its full
// results under bench/results/ (git-ignored: one file or folder per run), and replaces its
// own bench's section of bench/latest.md with its summary, leaving the other benches'
// sections as they were. So the file always holds the latest figures of all five benches,
// each with its date, machine and settings, and `git log -p bench/latest.md` shows how
// they moved.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const LATEST = path.join(root, 'bench/latest.md');

/** The benches, in the order their sections appear. */
const BENCHES = ['bench', 'bench:scale', 'bench:soak', 'bench:bulk', 'bench:profile'] as const;
export type Bench = (typeof BENCHES)[number];

const HEADER = [
  '# Latest bench runs',
  '',
  'Written by the benches: each run of `npm run bench`, `bench:scale`, `bench:soak`, `bench:bulk` or `bench:profile` replaces its own section below with its summary, and keeps the others. Full results of every run are in `bench/results/` (git-ignored) on the machine that ran it. How to run the benches and read their figures: [docs/performance.md](../docs/performance.md).',
  '',
].join('\n');

const start = (bench: Bench): string => `<!-- npm run ${bench} -->`;
const end = (bench: Bench): string => `<!-- /npm run ${bench} -->`;

/** The settings a run was made with: the bench's own variables, and which database (never its URL: it may hold a password). */
export function settings(): string {
  const own = Object.entries(process.env)
    .filter(([name]) => /^(BENCH|SCALE)_/.test(name))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `\`${name}=${value}\``);
  const database = process.env.DATABASE_URL ? 'DATABASE_URL set' : 'embedded PostgreSQL';
  return [...own, database].join(', ');
}

/**
 * Replaces `bench`'s section of bench/latest.md (or of `file`) with `summary` (markdown whose
 * first line is its `# ` title; every heading moves one level down), followed by the settings
 * and where the full results are.
 */
export function recordLatest(bench: Bench, summary: string, results: string, file = LATEST): void {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const sections = new Map<Bench, string>();
  for (const b of BENCHES) {
    const from = text.indexOf(start(b));
    const to = text.indexOf(end(b));
    if (from >= 0 && to > from) sections.set(b, text.slice(from, to + end(b).length));
  }
  const [title = '', ...rest] = summary
    .trim()
    .split('\n')
    .map((line) => (line.startsWith('#') ? `#${line}` : line));
  // The run's date (its results' file name is the run's id).
  const date = /\d{4}-\d{2}-\d{2}/.exec(title)?.[0] ?? new Date().toISOString().slice(0, 10);
  sections.set(
    bench,
    [start(bench), `## \`npm run ${bench}\`, ${date}`, '', `Settings: ${settings()}. Full results: \`${path.relative(root, results)}\` (git-ignored).`, ...rest, end(bench)].join('\n'),
  );
  const out = [HEADER, ...BENCHES.map((b) => sections.get(b) ?? [start(b), `## \`npm run ${b}\``, '', 'Not run since bench/latest.md was introduced.', end(b)].join('\n'))].join('\n\n');
  writeFileSync(file, `${out}\n`);
}
