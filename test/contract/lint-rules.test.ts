// Our own Redocly rules (redocly.yaml) must refuse what they are written to refuse:
// each case mutates a copy of the spec and expects the named rule to fire.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const source = readFileSync(path.join(root, 'openapi/v1.yaml'), 'utf8');
type Spec = Record<string, any>;

async function lintRules(spec: Spec): Promise<string[]> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'lint-')), 'v1.yaml');
  writeFileSync(file, stringify(spec));
  const result = await run(
    path.join(root, 'node_modules/.bin/redocly'),
    ['lint', file, '--config', path.join(root, 'redocly.yaml'), '--format=json'],
    { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
  ).catch((failed: { stdout: string }) => failed);
  const report = JSON.parse(result.stdout) as { problems: { ruleId: string }[] };
  return report.problems.map((p) => p.ruleId);
}

describe('redocly.yaml rules', () => {
  it.each<[string, { given: (spec: Spec) => void; want: string }]>([
    ['a deprecated operation without x-sunset', { given: (s) => delete s.paths['/pets/{petId}'].get['x-sunset'], want: 'rule/deprecated-has-sunset' }],
    ['x-sunset that is not a date', { given: (s) => (s.paths['/pets/{petId}'].get['x-sunset'] = 'soon'), want: 'rule/deprecated-has-sunset' }],
    ['a deprecated operation without x-successor', { given: (s) => delete s.paths['/pets/{petId}'].get['x-successor'], want: 'rule/deprecated-has-successor' }],
    ['an operation without x-stability', { given: (s) => delete s.paths['/pets'].get['x-stability'], want: 'rule/operation-stability' }],
    ['an unknown stability marker', { given: (s) => (s.paths['/pets'].post['x-stability'] = 'beta'), want: 'rule/operation-stability' }],
    [
      'an operation without a 4xx answer',
      {
        given: (s) => {
          const responses = s.paths['/pets'].get.responses;
          for (const status of Object.keys(responses)) if (status.startsWith('4')) delete responses[status];
        },
        want: 'operation-4xx-response',
      },
    ],
    ['an unused component', { given: (s) => (s.components.schemas.Orphan = { type: 'string' }), want: 'no-unused-components' }],
  ])('refuses %s', async (_title, { given, want }) => {
    const spec = parse(source) as Spec;
    given(spec);
    expect(await lintRules(spec)).toContain(want);
  });

  it('accepts the contract as it is', async () => {
    const rules = await lintRules(parse(source) as Spec);
    // The one deliberate exception lives in .redocly.lint-ignore.yaml, which applies to openapi/v1.yaml only.
    expect(rules.filter((r) => r !== 'operation-2xx-response')).toEqual([]);
  });
});
