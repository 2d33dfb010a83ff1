// JSON pointer -> line in the YAML file a CI user opens. The `yaml` package keeps each
// node's source range; a pointer to something that is gone (a removed operation) is placed
// on the nearest enclosing thing that is still there.
import { isMap, isScalar, isSeq, LineCounter, type Node as YamlNode, parseDocument } from 'yaml';
import { child, segments } from './document.js';

export type LineOf = (pointer: string) => number;

export function lineIndex(text: string): LineOf {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, keepSourceTokens: false });
  const lines = new Map<string, number>([['', 1]]);
  const lineAt = (offset: number | undefined) => (offset === undefined ? undefined : counter.linePos(offset).line);
  const walk = (node: unknown, pointer: string): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const at = child(pointer, key);
        const line = lineAt((pair.key as YamlNode | null)?.range?.[0]);
        if (line !== undefined) lines.set(at, line);
        walk(pair.value, at);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const at = child(pointer, i);
        const line = lineAt((item as YamlNode | null)?.range?.[0]);
        if (line !== undefined) lines.set(at, line);
        walk(item, at);
      });
    }
  };
  walk(doc.contents, '');
  return (pointer) => {
    const parts = segments(pointer);
    for (let n = parts.length; n >= 0; n--) {
      const found = lines.get(child('', ...parts.slice(0, n)));
      if (found !== undefined) return found;
    }
    return 1;
  };
}
