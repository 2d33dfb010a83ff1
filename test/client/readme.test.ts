// client/README.md tells a client team which tarball to install: the name it gives must be
// the one `npm pack` in client/ writes (`<name>-<version>.tgz`, from client/package.json),
// or the documented install command fails. npm itself is asked, with --dry-run (nothing is
// written) and --ignore-scripts (no build: the name does not depend on it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, run } from '../process.js';

/**
 * The environment of the npm child: without what `npm test` sets about this repository
 * (npm_config_local_prefix would make npm pack the repository's root package instead of
 * client/); npm's other settings (cache, registry) stay.
 */
function npmEnv(): NodeJS.ProcessEnv {
  const dropped = /^(npm_config_local_prefix|npm_package_.*|npm_lifecycle_.*|npm_command|NODE_OPTIONS|VITEST.*)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!dropped.test(name)) env[name] = value;
  return { ...env, npm_config_update_notifier: 'false' };
}

describe('client/README.md', () => {
  it('names the tarball that `npm pack` writes in client/, wherever it names one', async () => {
    const packed = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: path.join(root, 'client'), env: npmEnv() });
    expect(packed.code, packed.stderr).toBe(0);
    const [report] = JSON.parse(packed.stdout) as { filename: string }[];
    const filename = report?.filename;
    expect(filename).toMatch(/^animal-store-client-\d+\.\d+\.\d+.*\.tgz$/);

    const readme = readFileSync(path.join(root, 'client/README.md'), 'utf8');
    const installCommand = /^npm install (\S+\.tgz)\s*$/m.exec(readme);
    expect(installCommand, 'client/README.md has no `npm install <tarball>` line').not.toBeNull();
    expect(path.basename(installCommand?.[1] ?? '')).toBe(filename);
    // Every other mention of a tarball of the package (the pack step's comment) agrees too.
    const named = [...readme.matchAll(/animal-store-client-[^\s/`]*\.tgz/g)].map((m) => m[0]);
    expect(new Set(named)).toEqual(new Set([filename]));
  });
});
