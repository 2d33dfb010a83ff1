// `npm run spec:breaking`: refuses a contract change that would break a client of the
// released contract (openapi/released/v1.yaml). The checks are in scripts/breaking/ (one
// rule per breaking change, catalogued in scripts/breaking/rules.ts and docs/governance.md):
// they cover oasdiff's error-level rules that can apply to a contract like ours, plus our
// policy on x-sunset and x-stability. They run in-process, in milliseconds.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { isNode, type Node } from './breaking/document.js';
import { lineIndex } from './breaking/lines.js';
import { compareDocuments } from './breaking/operations.js';
import { asAnnotations, asJson, asText, type Outcome } from './breaking/report.js';

export const EXIT = { clean: 0, breaking: 1, error: 2 } as const;

const USAGE = `Usage: tsx scripts/spec-breaking.ts [--base FILE] [--head FILE] [--today YYYY-MM-DD] [--format text|json]

Compares the head contract (default openapi/v1.yaml) with the released one (default
openapi/released/v1.yaml) and lists every change that breaks a client of the released one:
its rule, its place (file:line and JSON pointer) and whom it breaks. Something removed is
placed at the nearest place in the head file that no longer has it, and at its line in the
released contract.

  --format text   for people (default)
  --format json   {base, head, breaking, findings: [{rule, pointer, side, file, line, message, breaks,
                  and for something removed: near, baseFile, baseLine}]}
  --today DATE    the date the sunset policy is judged on (default: today, UTC)
With GITHUB_ACTIONS set, each finding is also printed as an ::error annotation
(on standard output with text, on standard error with json).

Exit status: 0 no breaking change, 1 breaking changes found, 2 the check could not run
(bad arguments, unreadable file, invalid YAML, a $ref that cannot be followed).`;

class UsageError extends Error {}

function readContract(file: string): { doc: Node; text: string } {
  const text = readFileSync(file, 'utf8');
  const doc: unknown = parse(text);
  if (!isNode(doc) || !isNode(doc.paths)) throw new UsageError(`${file} is not an OpenAPI document (no paths)`);
  return { doc, text };
}

/**
 * Compares two contract files. `file` and `line` in each finding are in the head file as
 * given; for something removed, the line is that of `near`, and `baseFile`/`baseLine` say
 * where it was in the released contract (its pointer is into that one).
 */
export function checkFiles(baseFile: string, headFile: string, today: string): Outcome {
  const base = readContract(baseFile);
  const head = readContract(headFile);
  const [headLine, baseLine] = [lineIndex(head.text), lineIndex(base.text)];
  const findings = compareDocuments(base.doc, head.doc, today).map((f) =>
    f.side === 'head' ? { ...f, file: headFile, line: headLine(f.pointer) } : { ...f, file: headFile, line: headLine(f.near ?? ''), baseFile, baseLine: baseLine(f.pointer) },
  );
  return { base: baseFile, head: headFile, findings };
}

/** For spec:release: whether the change is safe to release, and the report if it is not. */
export async function checkBreaking(baseFile: string, headFile: string, today: string): Promise<{ ok: boolean; report: string }> {
  const outcome = checkFiles(baseFile, headFile, today);
  return { ok: outcome.findings.length === 0, report: asText(outcome) };
}

function parseArguments(argv: string[]): { base: string; head: string; today: string; format: 'text' | 'json' } | 'help' {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const rel = (p: string) => path.relative(process.cwd(), path.join(root, p)) || p;
  const options: Record<string, string> = { base: rel('openapi/released/v1.yaml'), head: rel('openapi/v1.yaml'), today: new Date().toISOString().slice(0, 10), format: 'text' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    const value = argv[i + 1];
    if (!(name in options) || value === undefined) throw new UsageError(`unknown or incomplete option ${arg}`);
    options[name] = value;
    i++;
  }
  if (options.format !== 'text' && options.format !== 'json') throw new UsageError(`--format must be text or json, not ${options.format}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(options.today ?? '')) throw new UsageError(`--today must be YYYY-MM-DD, not ${options.today}`);
  return { base: options.base as string, head: options.head as string, today: options.today as string, format: options.format };
}

function main(): number {
  let args: ReturnType<typeof parseArguments>;
  try {
    args = parseArguments(process.argv.slice(2));
    if (args === 'help') {
      console.log(USAGE);
      return EXIT.clean;
    }
    const outcome = checkFiles(args.base, args.head, args.today);
    const annotations = process.env.GITHUB_ACTIONS && outcome.findings.length > 0 ? asAnnotations(outcome) : '';
    if (args.format === 'json') {
      if (annotations) console.error(annotations);
      console.log(asJson(outcome));
    } else {
      if (annotations) console.log(annotations);
      (outcome.findings.length > 0 ? console.error : console.log)(asText(outcome));
    }
    return outcome.findings.length > 0 ? EXIT.breaking : EXIT.clean;
  } catch (error) {
    // Only the reason: a stack trace would bury it in a CI log.
    console.error(`spec:breaking: cannot check: ${error instanceof Error ? error.message : String(error)}`);
    if (error instanceof UsageError) console.error(USAGE);
    return EXIT.error;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main();
}
