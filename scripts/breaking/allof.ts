// allOf read as the one schema it stands for. `{allOf: [{$ref: Pet}]}` is Pet, and
// `{allOf: [NewPet, {required: [status]}]}` is NewPet with status required: comparing the
// merged schema reports what a client meets, where comparing allOf lists member by member
// would see a type, properties and required lists vanish that are still all there.
// Merging is only done where it cannot change what the schema accepts; otherwise the allOf
// is left as written and compared member by member (schema.ts).
import { child, keyAt, type Located, type Node, nothingAt, propertyAt, resolve } from './document.js';

/** Keywords that say nothing about which values are valid: the first one met is kept. */
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'example', '$comment', 'default', 'deprecated', 'externalDocs', 'xml', '$id', '$schema', '$anchor']);
const isAnnotation = (key: string) => ANNOTATIONS.has(key) || key.startsWith('x-');
/** Every part applies, so the tightest bound is the one that counts. */
const LOWER = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains']);
const UPPER = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains']);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const typesOf = (v: unknown) => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : []);
/** Types that a value can have under both lists (an integer is a number). */
function commonTypes(a: string[], b: string[]): string[] {
  const both = [...a.filter((t) => b.includes(t) || (t === 'integer' && b.includes('number'))), ...b.filter((t) => t === 'integer' && a.includes('number'))];
  return [...new Set(both)];
}

/** A schema (resolved) with its allOf merged in, or as it is when merging could change its meaning. */
export function flatten(doc: Node, at: Located, depth = 0): Located {
  const members = at.node.allOf;
  if (!Array.isArray(members) || members.length === 0 || depth > 32) return at;
  const { allOf: _allOf, ...rest } = at.node;
  const parts: Located[] = [{ ...at, node: rest }];
  for (const [i, member] of members.entries()) {
    const found = resolve(doc, member, child(keyAt(at, 'allOf'), i));
    if (!found) return at; // `true` or `false` as a member: left to the member-by-member comparison
    const part = flatten(doc, found, depth + 1);
    if ('allOf' in part.node) return at;
    parts.push(part);
  }
  return merge(at, parts) ?? at;
}

/** A schema read from `value` at `pointer`: $refs followed, allOf merged. */
export const schemaAt = (doc: Node, value: unknown, pointer: string): Located => flatten(doc, resolve(doc, value, pointer) ?? nothingAt(pointer));

function merge(at: Located, parts: Located[]): Located | undefined {
  // additionalProperties (or unevaluatedProperties) in one part does not see the properties
  // of the others: merged, it would accept what the allOf refuses.
  for (const part of parts) {
    const closing = ['additionalProperties', 'unevaluatedProperties'].some((k) => k in part.node && part.node[k] !== true);
    if (!closing) continue;
    const own = Object.keys((part.node.properties as Node | undefined) ?? {});
    const others = parts.filter((p) => p !== part).flatMap((p) => Object.keys((p.node.properties as Node | undefined) ?? {}));
    if (others.some((name) => !own.includes(name)) || parts.some((p) => p !== part && ('patternProperties' in p.node || 'additionalProperties' in p.node))) return undefined;
  }

  const node: Node = {};
  const origins: Record<string, string> = {};
  const properties: Record<string, string> = {};
  const take = (key: string, value: unknown, part: Located) => {
    node[key] = value;
    origins[key] = keyAt(part, key);
  };
  for (const part of parts) {
    for (const [key, value] of Object.entries(part.node)) {
      if (key === 'properties') {
        const merged = { ...((node.properties as Node | undefined) ?? {}) };
        for (const [name, schema] of Object.entries((value as Node | undefined) ?? {})) {
          if (name in merged && !same(merged[name], schema)) return undefined; // two schemas for one property: compared as written
          if (!(name in merged)) properties[name] = propertyAt(part, name);
          merged[name] = schema;
        }
        if (!('properties' in node)) origins.properties = keyAt(part, 'properties');
        node.properties = merged;
        continue;
      }
      if (!(key in node)) {
        take(key, value, part);
        continue;
      }
      const before = node[key];
      if (same(before, value) || isAnnotation(key)) continue;
      if (key === 'readOnly' || key === 'writeOnly') {
        if (value === true) take(key, true, part);
      } else if (key === 'required' && Array.isArray(before) && Array.isArray(value)) {
        take(key, [...new Set([...before, ...value])], part);
      } else if (key === 'type') {
        const common = commonTypes(typesOf(before), typesOf(value));
        if (common.length === 0) return undefined;
        if (!same(typesOf(before).sort(), [...common].sort())) node.type = common.length === 1 ? common[0] : common;
        if (same(typesOf(value).sort(), [...common].sort())) origins.type = keyAt(part, 'type');
      } else if ((LOWER.has(key) || UPPER.has(key)) && typeof before === 'number' && typeof value === 'number') {
        if (LOWER.has(key) ? value > before : value < before) take(key, value, part);
      } else {
        return undefined; // two different values for one keyword (enum, pattern, items, oneOf, ...): compared as written
      }
    }
  }
  // One part that constrains (the others only describe): the merged schema is that part, so
  // a finding names it (a shared component) rather than the allOf around it.
  const constraining = parts.filter((p) => Object.keys(p.node).some((k) => !isAnnotation(k)));
  const pointer = constraining.length === 1 && constraining[0] ? constraining[0].pointer : at.pointer;
  return { node, pointer, own: at.own, ownPointer: at.ownPointer, origins, properties };
}
