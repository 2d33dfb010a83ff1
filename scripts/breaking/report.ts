// The three ways a finding is shown: text for people, JSON for machines, and GitHub
// workflow commands, which GitHub shows as annotations on the line of openapi/v1.yaml.
import type { Finding } from './context.js';

export interface Placed extends Finding {
  /** The file a CI user opens (the head contract), and the line in it (of `near` for something removed). */
  file: string;
  line: number;
  /** For something removed: the released contract, and the line its pointer names there. */
  baseFile?: string;
  baseLine?: number;
}

/** A breaking change accepted on purpose (openapi/accepted-breaks.yaml), with why. */
export interface Acceptance {
  rule: string;
  pointer: string;
  reason: string;
}

export interface Outcome {
  base: string;
  head: string;
  /** What breaks a client and was not accepted: any one fails the gate. */
  findings: Placed[];
  /** What breaks a client and is accepted, with its reason: shown, never failing. */
  accepted?: (Placed & { reason: string })[];
  /** Acceptances that match no finding: stale, and failing the gate until removed. */
  stale?: Acceptance[];
  /** The file the acceptances were read from. */
  acceptedFile?: string;
}

/** Whether the gate fails: a finding not accepted, or an acceptance of nothing. */
export const fails = (o: Outcome): boolean => o.findings.length > 0 || (o.stale?.length ?? 0) > 0;

/** Where a finding is, after its file:line; the same words in text and annotations. */
const placeText = (f: Placed) => (f.side === 'head' ? `#${f.pointer}` : `#${f.near ?? ''}, which lacks #${f.pointer} of ${f.baseFile ?? 'the released contract'}:${f.baseLine ?? '?'}`);

export function asText(outcome: Outcome): string {
  const { base, head, findings, accepted = [], stale = [], acceptedFile = ACCEPTED_FILE } = outcome;
  const lines = [
    findings.length === 0
      ? `spec:breaking: no breaking change from ${base} to ${head}${accepted.length > 0 ? ` but the ${accepted.length} accepted in ${acceptedFile}` : ''}`
      : `spec:breaking: ${findings.length} breaking change${findings.length === 1 ? '' : 's'} from ${base} to ${head}:`,
  ];
  for (const f of findings) {
    lines.push('', `${f.file}:${f.line} [${f.rule}] ${f.message}`, `  at ${placeText(f)}`, `  breaks: ${f.breaks}`);
  }
  for (const f of accepted) lines.push('', `accepted: ${f.file}:${f.line} [${f.rule}] ${f.message}`, `  at ${placeText(f)}`, `  because: ${f.reason}`);
  for (const s of stale) lines.push('', `stale: ${acceptedFile} accepts [${s.rule}] at #${s.pointer}, which is no finding: remove it`);
  return lines.join('\n');
}

/** Where breaking changes accepted on purpose are listed, beside the contract. */
export const ACCEPTED_FILE = 'openapi/accepted-breaks.yaml';

export function asJson(outcome: Outcome): string {
  const { base, head, findings, accepted = [], stale = [] } = outcome;
  return JSON.stringify({ base, head, breaking: fails(outcome), findings, accepted, stale }, null, 2);
}

// https://docs.github.com/actions/reference/workflow-commands-for-github-actions: data and
// property values are escaped so that a message cannot end the command early.
const data = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const property = (s: string) => data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export function asAnnotations({ findings }: Outcome): string {
  return findings.map((f) => `::error file=${property(f.file)},line=${f.line},title=${property(f.rule)}::${data(`${f.message} (at ${placeText(f)}). ${f.breaks}`)}`).join('\n');
}
