// `npm run spec:breaking`: refuses a contract change that would break a client of the
// released contract (openapi/released/v1.yaml). The checks are in scripts/breaking/ (one
// rule per breaking change, catalogued in scripts/breaking/rules.ts; `--rules` prints them):
// they cover oasdiff's error-level rules that can apply to a contract like ours, plus our
// policy on x-sunset and x-stability. They run in-process, in milliseconds.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { isNode, type Node } from './breaking/document.js';
import { lineIndex } from './breaking/lines.js';
import { compareDocuments } from './breaking/operations.js';
import { existsSync } from 'node:fs';
import { asAnnotations, asJson, asText, fails, type Acceptance, type Outcome } from './breaking/report.js';
import { RULES } from './breaking/rules.js';

export const EXIT = { clean: 0, breaking: 1, error: 2 } as const;

/** The comment that heads openapi/accepted-breaks.yaml (spec:release writes it anew, with an empty list). */
export const ACCEPTED_HEADER = `# Breaking changes accepted on purpose since the released contract, each with its rule and
# JSON pointer as \`npm run spec:breaking\` reports them, and why (docs/governance.md). Only a
# fix that closes a hole may break a client; CHANGELOG.md says what changed for clients.
# spec:release empties this list: once released, nothing is left to accept.
`;

const USAGE = `Usage: tsx scripts/spec-breaking.ts [--base FILE] [--head FILE] [--accepted FILE] [--today YYYY-MM-DD] [--format text|json]
       tsx scripts/spec-breaking.ts --rules [--format text|json]

Compares the head contract (default openapi/v1.yaml) with the released one (default
openapi/released/v1.yaml) and lists every change that breaks a client of the released one:
its rule, its place (file:line and JSON pointer) and whom it breaks. Something removed is
placed at the nearest place in the head file that no longer has it, and at its line in the
released contract.

  --format text   for people (default)
  --format json   {base, head, breaking, findings: [{rule, pointer, side, file, line, message, breaks,
                  and for something removed: near, baseFile, baseLine}]}
  --today DATE    the date the sunset policy is judged on (default: today, UTC)
  --rules         print every rule the check applies, with whom it breaks and the
                  error-level oasdiff rules it covers, and exit 0 (json: [{rule, breaks, oasdiff}])
  --accepted FILE breaking changes accepted on purpose, each {rule, pointer, reason}
                  (default: accepted-breaks.yaml beside the head; none when absent). An
                  accepted change is shown with its reason and does not fail; an entry
                  that matches no finding fails until it is removed.
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
export function checkFiles(baseFile: string, headFile: string, today: string, acceptedFile?: string): Outcome {
  const base = readContract(baseFile);
  const head = readContract(headFile);
  const [headLine, baseLine] = [lineIndex(head.text), lineIndex(base.text)];
  const placed = compareDocuments(base.doc, head.doc, today).map((f) =>
    f.side === 'head' ? { ...f, file: headFile, line: headLine(f.pointer) } : { ...f, file: headFile, line: headLine(f.near ?? ''), baseFile, baseLine: baseLine(f.pointer) },
  );
  const acceptances = acceptedFile ? readAcceptances(acceptedFile) : [];
  const reasonOf = (f: { rule: string; pointer: string }) => acceptances.find((a) => a.rule === f.rule && a.pointer === f.pointer)?.reason;
  const findings = placed.filter((f) => reasonOf(f) === undefined);
  const accepted = placed.flatMap((f) => {
    const reason = reasonOf(f);
    return reason === undefined ? [] : [{ ...f, reason }];
  });
  const stale = acceptances.filter((a) => !placed.some((f) => f.rule === a.rule && f.pointer === a.pointer));
  return { base: baseFile, head: headFile, findings, accepted, stale, ...(acceptedFile ? { acceptedFile } : {}) };
}

/**
 * The breaking changes accepted on purpose, each with its reason (openapi/accepted-breaks.yaml:
 * a list of `{rule, pointer, reason}`), or none when the file is absent.
 */
function readAcceptances(file: string): Acceptance[] {
  if (!existsSync(file)) return [];
  const list: unknown = parse(readFileSync(file, 'utf8')) ?? [];
  if (!Array.isArray(list)) throw new UsageError(`${file} must be a list of {rule, pointer, reason}`);
  return list.map((entry: unknown, i) => {
    const e = entry as Partial<Acceptance> | null;
    if (!e || typeof e.rule !== 'string' || typeof e.pointer !== 'string' || typeof e.reason !== 'string' || e.reason.trim() === '') {
      throw new UsageError(`${file}: entry ${i + 1} needs a rule, a pointer and a reason`);
    }
    return { rule: e.rule, pointer: e.pointer, reason: e.reason.trim() };
  });
}

/** The rule catalogue (scripts/breaking/rules.ts), as `--rules` prints it. */
export function rulesReport(format: 'text' | 'json'): string {
  const entries = Object.entries(RULES).map(([rule, { breaks, oasdiff }]) => ({ rule, breaks, oasdiff }));
  if (format === 'json') return JSON.stringify(entries, null, 2);
  return entries.map((e) => `${e.rule}\n  breaks: ${e.breaks}\n  oasdiff: ${e.oasdiff.length > 0 ? e.oasdiff.join(', ') : '-'}`).join('\n');
}

/** For spec:release: whether the change is safe to release, and the report if it is not. */
export async function checkBreaking(baseFile: string, headFile: string, today: string, acceptedFile?: string): Promise<{ ok: boolean; report: string }> {
  const outcome = checkFiles(baseFile, headFile, today, acceptedFile);
  return { ok: !fails(outcome), report: asText(outcome) };
}

function parseArguments(argv: string[]): { base: string; head: string; accepted: string; today: string; format: 'text' | 'json'; rules: boolean } | 'help' {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const rel = (p: string) => path.relative(process.cwd(), path.join(root, p)) || p;
  const options: Record<string, string> = { base: rel('openapi/released/v1.yaml'), head: rel('openapi/v1.yaml'), today: new Date().toISOString().slice(0, 10), format: 'text' };
  let rules = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--rules') {
      rules = true;
      continue;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    const value = argv[i + 1];
    if (!(name in options || name === 'accepted') || value === undefined) throw new UsageError(`unknown or incomplete option ${arg}`);
    options[name] = value;
    i++;
  }
  if (options.format !== 'text' && options.format !== 'json') throw new UsageError(`--format must be text or json, not ${options.format}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(options.today ?? '')) throw new UsageError(`--today must be YYYY-MM-DD, not ${options.today}`);
  // The acceptances beside the head contract, unless named.
  const accepted = options.accepted ?? path.join(path.dirname(options.head as string), 'accepted-breaks.yaml');
  return { base: options.base as string, head: options.head as string, accepted, today: options.today as string, format: options.format, rules };
}

function main(): number {
  let args: ReturnType<typeof parseArguments>;
  try {
    args = parseArguments(process.argv.slice(2));
    if (args === 'help') {
      console.log(USAGE);
      return EXIT.clean;
    }
    if (args.rules) {
      console.log(rulesReport(args.format));
      return EXIT.clean;
    }
    const outcome = checkFiles(args.base, args.head, args.today, args.accepted);
    const annotations = process.env.GITHUB_ACTIONS && outcome.findings.length > 0 ? asAnnotations(outcome) : '';
    if (args.format === 'json') {
      if (annotations) console.error(annotations);
      console.log(asJson(outcome));
    } else {
      if (annotations) console.log(annotations);
      (fails(outcome) ? console.error : console.log)(asText(outcome));
    }
    return fails(outcome) ? EXIT.breaking : EXIT.clean;
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
