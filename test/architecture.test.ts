// The house keeps its shape (docs/contract.md, "Where code goes"): no import cycle and no
// arrow that runs back up between the rooms of src/ (dependency-cruiser with
// .dependency-cruiser.cjs, also `npm run lint:deps`), and src/handlers/ holds exactly one
// module per operationId of the contract, each exporting the handler of that name.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { describe, expect, it } from 'vitest';
import { operationTable } from '../generated/operations.js';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('the rooms of src/', () => {
  it('have no import cycle, and no import from a room above or beside (.dependency-cruiser.cjs)', async () => {
    const cwd = process.cwd();
    process.chdir(root);
    try {
      const options = await extractDepcruiseOptions('./.dependency-cruiser.cjs');
      const result = await cruise(['src'], { ...options, validate: true });
      if (typeof result.output === 'string') throw new Error(result.output);
      const violations = result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
      expect(violations).toEqual([]);
      expect(result.output.summary.totalCruised).toBeGreaterThan(100);
    } finally {
      process.chdir(cwd);
    }
  });

  it('src/handlers/ holds one module per operationId of the contract, and nothing else', () => {
    const modules = readdirSync(new URL('../src/handlers/', import.meta.url)).map((file) => file.replace(/\.ts$/, ''));
    expect(modules.sort()).toEqual(Object.keys(operationTable).sort());
  });
});
