// Schemas compared both ways. What a client sends (parameters, request bodies) may accept
// more but never less; what a client reads (response bodies and headers) may promise more
// but never return anything the released contract ruled out, nor lose what it returned.
import { schemaAt } from './allof.js';
import { type Context, inBase, inHead } from './context.js';
import { child, isNode, keyAt, type Located, listOf, nodeOf, propertyAt, stringsOf } from './document.js';
import { compareLifecycle, removalProblem } from './lifecycle.js';

export type Direction = 'request' | 'response';

interface Pair {
  dir: Direction;
  /** The rule prefix for this place: request-parameter, request-body, request-property, response-header, ... */
  prefix: string;
  b: Located;
  h: Located;
  /** For people: which operation and field, e.g. `createPet request body.name`. */
  where: string;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const typesOf = (s: Record<string, unknown>) => (Array.isArray(s.type) ? stringsOf(s.type) : typeof s.type === 'string' ? [s.type] : []);
/** Whether a value of type `t` is within `types` (a number schema takes integers). */
const within = (types: string[], t: string) => types.includes(t) || (t === 'integer' && types.includes('number'));

// [keyword, which bound it is, rule suffix when a request narrows it, when a response widens it]
// Numeric bounds (minimum, exclusiveMinimum, ...) are compared apart, see numericBound.
const BOUNDS: [string, 'lower' | 'upper', string, string][] = [
  ['minLength', 'lower', 'min-length-increased', 'min-length-decreased'],
  ['maxLength', 'upper', 'max-length-decreased', 'max-length-increased'],
  ['minItems', 'lower', 'min-items-increased', 'min-items-decreased'],
  ['maxItems', 'upper', 'max-items-decreased', 'max-items-increased'],
  ['minProperties', 'lower', 'min-properties-increased', 'min-properties-decreased'],
  ['maxProperties', 'upper', 'max-properties-decreased', 'max-properties-increased'],
];

// Keywords compared as a whole: in a request, one added or changed may refuse what was
// accepted; in a response, one removed or changed may let through what was ruled out.
const CONSTRAINTS = [
  'multipleOf',
  'uniqueItems',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'minContains',
  'maxContains',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'prefixItems',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
];

/** Formats that hold every value of another: a request may widen int32 to int64, a response may narrow the other way. */
const WIDER: Record<string, string> = { int32: 'int64', float: 'double' };

export function compareSchema(ctx: Context, dir: Direction, prefix: string, base: unknown, basePointer: string, head: unknown, headPointer: string, where: string): void {
  const b = schemaAt(ctx.base, base, basePointer);
  const h = schemaAt(ctx.head, head, headPointer);
  if (!ctx.firstVisit(`${dir} ${prefix} ${b.pointer} ${h.pointer}`)) return;
  const pair: Pair = { dir, prefix, b, h, where };
  compareTypes(ctx, pair);
  compareValues(ctx, pair);
  compareBounds(ctx, pair);
  compareConstraints(ctx, pair);
  compareComposition(ctx, pair);
  compareDiscriminator(ctx, pair);
  compareObject(ctx, pair);
  if (b.node.items !== undefined || h.node.items !== undefined) {
    compareSchema(ctx, dir, `${dir}-property`, b.node.items, keyAt(b, 'items'), h.node.items, keyAt(h, 'items'), `${where}[]`);
  }
}

function compareTypes(ctx: Context, { dir, prefix, b, h, where }: Pair): void {
  const [bt, ht] = [typesOf(b.node), typesOf(h.node)];
  const broken = dir === 'request' ? ht.length > 0 && (bt.length === 0 || bt.some((t) => !within(ht, t))) : bt.length > 0 && (ht.length === 0 || ht.some((t) => !within(bt, t)));
  if (broken) ctx.report(`${prefix}-type-changed`, inHead(keyAt(h, 'type')), `${where}: type changed from ${bt.join('|') || 'any'} to ${ht.join('|') || 'any'}`);

  const [bf, hf] = [b.node.format, h.node.format];
  const formatBroken = dir === 'request' ? hf !== undefined && hf !== bf && WIDER[String(bf)] !== hf : bf !== undefined && hf !== bf && WIDER[String(hf)] !== bf;
  if (formatBroken) ctx.report(`${prefix}-format-changed`, inHead(keyAt(h, 'format')), `${where}: format changed from ${String(bf ?? 'none')} to ${String(hf ?? 'none')}`);

  const [bp, hp] = [b.node.pattern, h.node.pattern];
  if (dir === 'request' && hp !== undefined && hp !== bp) {
    ctx.report(`${prefix}-pattern-added`, inHead(keyAt(h, 'pattern')), `${where}: pattern changed from ${String(bp ?? 'none')} to ${String(hp)}`);
  }
  if (dir === 'response' && bp !== undefined && hp !== bp) {
    ctx.report(`${prefix}-pattern-removed`, inHead(keyAt(h, 'pattern')), `${where}: pattern changed from ${String(bp)} to ${String(hp ?? 'none')}`);
  }
}

function compareValues(ctx: Context, { dir, prefix, b, h, where }: Pair): void {
  const [be, he] = [b.node.enum, h.node.enum];
  const missing = (from: unknown[], to: unknown[]) => from.filter((v) => !to.some((w) => same(v, w)));
  if (dir === 'request' && Array.isArray(he)) {
    if (!Array.isArray(be)) ctx.report(`${prefix}-became-enum`, inHead(keyAt(h, 'enum')), `${where}: now limited to ${he.join(', ')}`);
    else if (missing(be, he).length > 0) ctx.report(`${prefix}-enum-value-removed`, inHead(keyAt(h, 'enum')), `${where}: enum no longer accepts ${missing(be, he).join(', ')}`);
  }
  if (dir === 'request') {
    // x-extensible-enum lists values a client may send; clients reading it must tolerate new ones.
    const gone = missing(listOf(b.node['x-extensible-enum']), listOf(h.node['x-extensible-enum']));
    if (gone.length > 0) ctx.report(`${prefix}-enum-value-removed`, inHead(keyAt(h, 'x-extensible-enum')), `${where}: x-extensible-enum no longer lists ${gone.join(', ')}`);
  }
  if (dir === 'response' && Array.isArray(be)) {
    if (!Array.isArray(he)) ctx.report(`${prefix}-enum-value-added`, inHead(h.pointer), `${where}: no longer limited to the enum ${be.join(', ')}`);
    else if (missing(he, be).length > 0) ctx.report(`${prefix}-enum-value-added`, inHead(keyAt(h, 'enum')), `${where}: enum gained ${missing(he, be).join(', ')}`);
  }
  const [hasB, hasH] = ['const' in b.node, 'const' in h.node];
  if (dir === 'request' && hasH && (!hasB || !same(b.node.const, h.node.const))) {
    ctx.report(`${prefix}-const-added`, inHead(keyAt(h, 'const')), `${where}: now must be ${JSON.stringify(h.node.const)}`);
  }
  if (dir === 'response' && hasB && (!hasH || !same(b.node.const, h.node.const))) {
    ctx.report(`${prefix}-const-removed`, inHead(keyAt(h, 'const')), `${where}: no longer always ${JSON.stringify(b.node.const)}`);
  }
  if (dir === 'request' && (prefix === 'request-parameter' || prefix === 'request-property') && !same(b.node.default, h.node.default)) {
    ctx.report(`${prefix}-default-value-changed`, inHead(keyAt(h, 'default')), `${where}: default changed from ${JSON.stringify(b.node.default) ?? 'none'} to ${JSON.stringify(h.node.default) ?? 'none'}`);
  }
}

interface Bound {
  value: number;
  exclusive: boolean;
  /** The keyword it was read from. */
  key: string;
}

/**
 * The lower or upper bound of a number schema, from minimum/exclusiveMinimum (or the maximum
 * pair), whichever is tighter. On integers an exclusive bound is the inclusive one next to
 * it, so `exclusiveMaximum: 600` and `maximum: 599` are the same bound.
 */
function numericBound(node: Record<string, unknown>, side: 'lower' | 'upper', integer: boolean): Bound | undefined {
  const [inclusive, exclusive] = side === 'lower' ? ['minimum', 'exclusiveMinimum'] : ['maximum', 'exclusiveMaximum'];
  const found: Bound[] = [];
  // OpenAPI 3.0 wrote an exclusive bound as `maximum: n, exclusiveMaximum: true`.
  if (typeof node[inclusive] === 'number') found.push({ value: node[inclusive] as number, exclusive: node[exclusive] === true, key: inclusive });
  if (typeof node[exclusive] === 'number') found.push({ value: node[exclusive] as number, exclusive: true, key: exclusive });
  const bounds = found.map((b) => {
    if (!integer) return b;
    const value = side === 'lower' ? (b.exclusive ? Math.floor(b.value) + 1 : Math.ceil(b.value)) : b.exclusive ? Math.ceil(b.value) - 1 : Math.floor(b.value);
    return { ...b, value, exclusive: false };
  });
  return bounds.reduce<Bound | undefined>((tightest, b) => (tightest === undefined || tighterBound(side, b, tightest) ? b : tightest), undefined);
}

/** Whether bound `a` lets fewer values through than `b` (no bound lets all through). */
function tighterBound(side: 'lower' | 'upper', a: Bound | undefined, b: Bound | undefined): boolean {
  if (a === undefined) return false;
  if (b === undefined) return true;
  if (a.value !== b.value) return side === 'lower' ? a.value > b.value : a.value < b.value;
  return a.exclusive && !b.exclusive;
}

const boundText = (b: Bound | undefined) => (b === undefined ? 'none' : `${b.key} ${b.value}`);

function compareBounds(ctx: Context, { dir, prefix, b, h, where }: Pair): void {
  // Integer arithmetic only when both sides are integers: otherwise 599.5 lies between 599 and 600.
  const integer = [b.node, h.node].every((n) => typesOf(n).length > 0 && typesOf(n).every((t) => t === 'integer'));
  for (const [side, narrowed, widened] of [
    ['lower', 'min-increased', 'min-decreased'],
    ['upper', 'max-decreased', 'max-increased'],
  ] as const) {
    const [bb, hb] = [numericBound(b.node, side, integer), numericBound(h.node, side, integer)];
    const at = inHead(keyAt(h, hb?.key ?? bb?.key ?? (side === 'lower' ? 'minimum' : 'maximum')));
    const text = `${where}: ${side} bound changed from ${boundText(bb)} to ${boundText(hb)}`;
    if (dir === 'request' && tighterBound(side, hb, bb)) ctx.report(`${prefix}-${narrowed}`, at, text);
    if (dir === 'response' && tighterBound(side, bb, hb)) ctx.report(`${prefix}-${widened}`, at, text);
  }
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  for (const [key, bound, narrowed, widened] of BOUNDS) {
    const [bv, hv] = [num(b.node[key]), num(h.node[key])];
    // A request narrows when a bound appears or tightens; a response widens when one goes or loosens.
    const tighter = (from: number | undefined, to: number | undefined) => to !== undefined && (from === undefined || (bound === 'lower' ? to > from : to < from));
    if (dir === 'request' && tighter(bv, hv)) ctx.report(`${prefix}-${narrowed}`, inHead(keyAt(h, key)), `${where}: ${key} ${bv === undefined ? 'set' : 'changed from ' + bv} to ${hv}`);
    if (dir === 'response' && tighter(hv, bv)) ctx.report(`${prefix}-${widened}`, inHead(keyAt(h, key)), `${where}: ${key} changed from ${bv} to ${hv ?? 'none'}`);
  }
}

function compareConstraints(ctx: Context, { dir, prefix, b, h, where }: Pair): void {
  const value = (node: Record<string, unknown>, key: string) => (key === 'uniqueItems' && node[key] === false ? undefined : node[key]);
  for (const key of CONSTRAINTS) {
    const [bv, hv] = [value(b.node, key), value(h.node, key)];
    if (same(bv, hv)) continue;
    if (dir === 'request' && hv !== undefined) ctx.report(`${prefix}-constraint-added`, inHead(keyAt(h, key)), `${where}: ${key} ${bv === undefined ? 'added' : 'changed'}`);
    if (dir === 'response' && bv !== undefined) ctx.report(`${prefix}-constraint-removed`, inHead(keyAt(h, key)), `${where}: ${key} ${hv === undefined ? 'removed' : 'changed'}`);
  }
}

/** Subschemas of oneOf/anyOf/allOf, keyed by their $ref (or position) so that reordering is no change. */
function alternatives(node: Record<string, unknown>, key: string): Map<string, [unknown, number]> {
  return new Map(listOf(node[key]).map((s, i) => [isNode(s) && typeof s.$ref === 'string' ? s.$ref : `#${i}`, [s, i]]));
}

function compareComposition(ctx: Context, { dir, prefix, b, h, where }: Pair): void {
  for (const key of ['oneOf', 'anyOf', 'allOf']) {
    const [ba, ha] = [alternatives(b.node, key), alternatives(h.node, key)];
    if (ba.size === 0 && ha.size === 0) continue;
    const suffix = key === 'oneOf' ? 'one-of' : 'any-of';
    if (key === 'allOf') {
      // allOf narrows with every subschema: a request may not gain one, a response may not lose one.
      const [from, to] = dir === 'request' ? [ba, ha] : [ha, ba];
      const changed = [...to.keys()].filter((k) => !from.has(k));
      if (changed.length > 0) ctx.report(`${prefix}-constraint-${dir === 'request' ? 'added' : 'removed'}`, inHead(keyAt(h, key)), `${where}: allOf ${dir === 'request' ? 'gained' : 'lost'} ${changed.join(', ')}`);
    } else if (dir === 'request') {
      const removed = [...ba.keys()].filter((k) => !ha.has(k));
      if (ba.size === 0) {
        const kept = keptAsAlternative(ctx, key, b, h);
        if (kept) compareSchema(ctx, dir, prefix, b.own, b.ownPointer, kept.value, kept.pointer, `${where} (${key} ${kept.key})`);
        else ctx.report(`${prefix}-constraint-added`, inHead(keyAt(h, key)), `${where}: ${key} added`);
      } else if (ha.size > 0 && removed.length > 0) ctx.report(`${prefix}-${suffix}-removed`, inHead(keyAt(h, key)), `${where}: ${key} lost ${removed.join(', ')}`);
    } else if (ba.size > 0) {
      const added = [...ha.keys()].filter((k) => !ba.has(k));
      if (ha.size === 0) ctx.report(`${prefix}-${suffix}-added`, inHead(h.pointer), `${where}: ${key} removed, so any value may come back`);
      else if (added.length > 0) ctx.report(`${prefix}-${suffix}-added`, inHead(keyAt(h, key)), `${where}: ${key} gained ${added.join(', ')}`);
    }
    for (const [k, [bs, bi]] of ba) {
      const match = ha.get(k);
      if (match) compareSchema(ctx, dir, prefix, bs, child(keyAt(b, key), bi), match[0], child(keyAt(h, key), match[1]), `${where} (${key} ${k})`);
    }
  }
}

/**
 * A request schema that became `oneOf`/`anyOf` [itself, others] still accepts all it did:
 * with anyOf always, with oneOf when no value it accepted can match one of the others too,
 * which holds when their types cannot meet (an object, or an array of them). Anything else
 * may refuse a value that matches two alternatives, and stays reported.
 */
function keptAsAlternative(ctx: Context, key: string, b: Located, h: Located): { key: string; value: unknown; pointer: string } | undefined {
  const members = listOf(h.node[key]).map((value, i) => ({ key: isNode(value) && typeof value.$ref === 'string' ? value.$ref : `#${i}`, value, pointer: child(keyAt(h, key), i) }));
  const resolved = members.map((m) => schemaAt(ctx.head, m.value, m.pointer));
  const index = resolved.findIndex((r) => r.pointer === b.pointer || same(r.node, b.node));
  if (index < 0) return undefined;
  if (key === 'oneOf') {
    const types = typesOf(b.node);
    const meets = (other: string[]) => other.length === 0 || types.some((t) => within(other, t)) || other.some((t) => within(types, t));
    if (types.length === 0 || resolved.some((r, i) => i !== index && meets(typesOf(r.node)))) return undefined;
  }
  return members[index];
}

function compareDiscriminator(ctx: Context, { dir, prefix, b, h, where }: Pair): void {
  const [bd, hd] = [b.node.discriminator, h.node.discriminator];
  if (bd === undefined && hd === undefined) return;
  const [bn, hn] = [nodeOf(bd), nodeOf(hd)];
  const place = inHead(keyAt(h, 'discriminator'));
  if (bn.propertyName !== hn.propertyName && (dir === 'request' ? hd !== undefined : bd !== undefined)) {
    ctx.report(`${prefix}-discriminator-changed`, place, `${where}: discriminator property changed from ${String(bn.propertyName ?? 'none')} to ${String(hn.propertyName ?? 'none')}`);
    return;
  }
  // A request may map more values; a response may not map a value it did not, nor remap one.
  const [from, to] = dir === 'request' ? [nodeOf(bn.mapping), nodeOf(hn.mapping)] : [nodeOf(hn.mapping), nodeOf(bn.mapping)];
  const changed = Object.keys(from).filter((k) => from[k] !== to[k]);
  if (changed.length > 0) ctx.report(`${prefix}-discriminator-changed`, place, `${where}: discriminator mapping changed for ${changed.join(', ')}`);
}

function compareObject(ctx: Context, { dir, prefix, b, h, where }: Pair): void {
  const [bp, hp] = [nodeOf(b.node.properties), nodeOf(h.node.properties)];
  const [breq, hreq] = [stringsOf(b.node.required), stringsOf(h.node.required)];
  // Each property as a schema, its $refs followed and allOf merged: readOnly, writeOnly and
  // deprecated are read from what it stands for, however it is written.
  const propertiesOf = (doc: typeof ctx.base, at: Located, props: Record<string, unknown>) => new Map(Object.entries(props).map(([name, value]) => [name, schemaAt(doc, value, propertyAt(at, name))]));
  const [bProps, hProps] = [propertiesOf(ctx.base, b, bp), propertiesOf(ctx.head, h, hp)];
  const flag = (props: Map<string, Located>, name: string, key: 'readOnly' | 'writeOnly') => props.get(name)?.node[key] === true;
  // Clients never send read-only properties, and never read write-only ones.
  const unseen = dir === 'request' ? 'readOnly' : 'writeOnly';
  const propPrefix = `${dir}-property`;
  // A removed property is missing from the head's `properties` (or the schema, when it has none).
  const gone = (name: string) => inBase(propertyAt(b, name), keyAt(h, 'properties'));
  // Our policy: a deprecated property may go on or after its x-sunset, as an operation may.
  const removal = (name: string) => removalProblem(ctx, bProps.get(name)?.node ?? {});

  if (dir === 'request') {
    for (const name of hreq.filter((n) => !breq.includes(n) && !flag(hProps, n, 'readOnly'))) {
      const known = name in bp;
      ctx.report(known ? 'request-property-became-required' : 'request-property-added-required', inHead(keyAt(h, 'required')), `${where}.${name}: ${known ? 'now required' : 'new required property'}`);
    }
    const closed = h.node.additionalProperties === false || h.node.unevaluatedProperties === false;
    for (const name of Object.keys(bp).filter((n) => !(n in hp) && !flag(bProps, n, 'readOnly'))) {
      const problem = removal(name);
      if (closed && problem) ctx.report('request-property-removed', gone(name), `${where}.${name}: removed ${problem}, and the schema refuses properties it does not name`);
    }
  } else {
    for (const name of Object.keys(bp).filter((n) => !(n in hp) && !flag(bProps, n, 'writeOnly'))) {
      const problem = removal(name);
      if (problem) ctx.report(`response-property-removed-${breq.includes(name) ? 'required' : 'optional'}`, gone(name), `${where}.${name}: removed from the response ${problem}`);
    }
    for (const name of breq.filter((n) => !hreq.includes(n) && n in hp && !flag(bProps, n, 'writeOnly'))) {
      ctx.report('response-property-became-optional', inHead(propertyAt(h, name)), `${where}.${name}: no longer required`);
    }
  }

  for (const name of Object.keys(bp).filter((n) => n in hp && !flag(bProps, n, unseen))) {
    const [baseProp, headProp] = [bProps.get(name) as Located, hProps.get(name) as Located];
    if (dir === 'request' && flag(hProps, name, 'readOnly')) {
      ctx.report('request-property-became-read-only', inHead(keyAt(headProp, 'readOnly')), `${where}.${name}: became read-only`);
      continue;
    }
    if (dir === 'response' && flag(hProps, name, 'writeOnly')) {
      ctx.report('response-property-became-write-only', inHead(keyAt(headProp, 'writeOnly')), `${where}.${name}: became write-only, so no longer returned`);
      continue;
    }
    compareLifecycle(ctx, propPrefix, baseProp.node, headProp, `${where}.${name}`);
    compareSchema(ctx, dir, propPrefix, bp[name], propertyAt(b, name), hp[name], propertyAt(h, name), `${where}.${name}`);
  }

  const [ba, ha] = [b.node.additionalProperties, h.node.additionalProperties];
  const open = (v: unknown) => v === undefined || v === true;
  if (dir === 'request' && ha === false && ba !== false) {
    ctx.report(`${prefix}-additional-properties-restricted`, inHead(keyAt(h, 'additionalProperties')), `${where}: properties it does not name are now refused`);
  } else if (dir === 'response' && ((ba === false && ha !== false) || (isNode(ba) && open(ha)))) {
    ctx.report(`${prefix}-additional-properties-widened`, inHead(keyAt(h, 'additionalProperties')), `${where}: now allows properties the released contract ruled out`);
  } else if ((isNode(ba) || isNode(ha)) && !(dir === 'request' && ba === false) && !(dir === 'response' && ha === false)) {
    // Skipped: a request that took no unknown property cannot narrow there, nor can a response that returns none widen.
    compareSchema(ctx, dir, propPrefix, ba, keyAt(b, 'additionalProperties'), ha, keyAt(h, 'additionalProperties'), `${where}.*`);
  }
}
