// bench/latest.md keeps the last run of each bench: a run replaces its own section and
// leaves the others as they were (bench/latest.ts).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordLatest } from '../../bench/latest.js';

const folder = mkdtempSync(path.join(tmpdir(), 'animal-store-latest-'));
const file = path.join(folder, 'latest.md');
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('bench/latest.md', () => {
  it('holds one section per bench; a run replaces only its own', () => {
    recordLatest('bench', '# Benchmark 2026-01-01T10:00:00.000Z\n\nMachine: m.\n\n| a |\n|---|\n| 1 |', '/x/bench/results/bench-1.md', file);
    recordLatest('bench:soak', '# Soak\n\nflat', '/x/bench/results/soak-1.md', file);
    recordLatest('bench', '# Benchmark 2026-01-02T10:00:00.000Z\n\n| a |\n|---|\n| 2 |', '/x/bench/results/bench-2.md', file);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('## `npm run bench`, 2026-01-02');
    expect(text).toContain('| 2 |');
    expect(text).not.toContain('Machine: m.');
    expect(text).not.toContain('| 1 |');
    expect(text).toContain('## `npm run bench:soak`, ');
    expect(text).toContain('flat');
    // Every bench has its section, in a fixed order, whether it ran or not.
    const titles = [...text.matchAll(/^## `npm run ([a-z:]+)`/gm)].map((m) => m[1]);
    expect(titles).toEqual(['bench', 'bench:scale', 'bench:soak', 'bench:bulk', 'bench:profile']);
  });
});
