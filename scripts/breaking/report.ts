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

export interface Outcome {
  base: string;
  head: string;
  findings: Placed[];
}

/** Where a finding is, after its file:line; the same words in text and annotations. */
const placeText = (f: Placed) => (f.side === 'head' ? `#${f.pointer}` : `#${f.near ?? ''}, which lacks #${f.pointer} of ${f.baseFile ?? 'the released contract'}:${f.baseLine ?? '?'}`);

export function asText({ base, head, findings }: Outcome): string {
  if (findings.length === 0) return `spec:breaking: no breaking change from ${base} to ${head}`;
  const lines = [`spec:breaking: ${findings.length} breaking change${findings.length === 1 ? '' : 's'} from ${base} to ${head}:`];
  for (const f of findings) {
    lines.push('', `${f.file}:${f.line} [${f.rule}] ${f.message}`, `  at ${placeText(f)}`, `  breaks: ${f.breaks}`);
  }
  return lines.join('\n');
}

export function asJson({ base, head, findings }: Outcome): string {
  return JSON.stringify({ base, head, breaking: findings.length > 0, findings }, null, 2);
}

// https://docs.github.com/actions/reference/workflow-commands-for-github-actions: data and
// property values are escaped so that a message cannot end the command early.
const data = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const property = (s: string) => data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export function asAnnotations({ findings }: Outcome): string {
  return findings.map((f) => `::error file=${property(f.file)},line=${f.line},title=${property(f.rule)}::${data(`${f.message} (at ${placeText(f)}). ${f.breaks}`)}`).join('\n');
}
