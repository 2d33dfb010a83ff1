// Schemas compared both ways. What a client sends (parameters, request bodies) may accept
// more but never less; what a client reads (response bodies and headers) may promise more
// but never return anything the released contract ruled out, nor lose what it returned.
import { type Context, inBase, inHead } from './context.js';
import { child, isNode, keyAt, type Located, listOf, nodeOf, nothingAt, resolve, stringsOf } from './document.js';
import { compareLifecycle } from './lifecycle.js';

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
const BOUNDS: [string, 'lower' | 'upper', string, string][] = [
  ['minimum', 'lower', 'min-increased', 'min-decreased'],
  ['exclusiveMinimum', 'lower', 'min-increased', 'min-decreased'],
  ['maximum', 'upper', 'max-decreased', 'max-increased'],
  ['exclusiveMaximum', 'upper', 'max-decreased', 'max-increased'],
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
  const b = resolve(ctx.base, base, basePointer) ?? nothingAt(basePointer);
  const h = resolve(ctx.head, head, headPointer) ?? nothingAt(headPointer);
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
    compareSchema(ctx, dir, `${dir}-property`, b.node.items, child(b.pointer, 'items'), h.node.items, keyAt(h, 'items'), `${where}[]`);
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

function compareBounds(ctx: Context, { dir, prefix, b, h, where }: Pair): void {
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
      if (ba.size === 0) ctx.report(`${prefix}-constraint-added`, inHead(keyAt(h, key)), `${where}: ${key} added`);
      else if (ha.size > 0 && removed.length > 0) ctx.report(`${prefix}-${suffix}-removed`, inHead(keyAt(h, key)), `${where}: ${key} lost ${removed.join(', ')}`);
    } else if (ba.size > 0) {
      const added = [...ha.keys()].filter((k) => !ba.has(k));
      if (ha.size === 0) ctx.report(`${prefix}-${suffix}-added`, inHead(h.pointer), `${where}: ${key} removed, so any value may come back`);
      else if (added.length > 0) ctx.report(`${prefix}-${suffix}-added`, inHead(keyAt(h, key)), `${where}: ${key} gained ${added.join(', ')}`);
    }
    for (const [k, [bs, bi]] of ba) {
      const match = ha.get(k);
      if (match) compareSchema(ctx, dir, prefix, bs, child(b.pointer, key, bi), match[0], child(keyAt(h, key), match[1]), `${where} (${key} ${k})`);
    }
  }
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
  const flag = (props: Record<string, unknown>, name: string, key: 'readOnly' | 'writeOnly') => nodeOf(props[name])[key] === true;
  // Clients never send read-only properties, and never read write-only ones.
  const unseen = dir === 'request' ? 'readOnly' : 'writeOnly';
  const propertiesAt = (at: Located) => keyAt(at, 'properties');
  const propPrefix = `${dir}-property`;

  if (dir === 'request') {
    for (const name of hreq.filter((n) => !breq.includes(n) && !flag(hp, n, 'readOnly'))) {
      const known = name in bp;
      ctx.report(known ? 'request-property-became-required' : 'request-property-added-required', inHead(keyAt(h, 'required')), `${where}.${name}: ${known ? 'now required' : 'new required property'}`);
    }
    const closed = h.node.additionalProperties === false || h.node.unevaluatedProperties === false;
    for (const name of Object.keys(bp).filter((n) => !(n in hp) && !flag(bp, n, 'readOnly'))) {
      if (closed) ctx.report('request-property-removed', inBase(child(propertiesAt(b), name)), `${where}.${name}: removed, and the schema refuses properties it does not name`);
    }
  } else {
    for (const name of Object.keys(bp).filter((n) => !(n in hp) && !flag(bp, n, 'writeOnly'))) {
      const required = breq.includes(name);
      ctx.report(`response-property-removed-${required ? 'required' : 'optional'}`, inBase(child(propertiesAt(b), name)), `${where}.${name}: removed from the response`);
    }
    for (const name of breq.filter((n) => !hreq.includes(n) && n in hp && !flag(bp, n, 'writeOnly'))) {
      ctx.report('response-property-became-optional', inHead(child(propertiesAt(h), name)), `${where}.${name}: no longer required`);
    }
  }

  for (const name of Object.keys(bp).filter((n) => n in hp && !flag(bp, n, unseen))) {
    const headProp = resolve(ctx.head, hp[name], child(propertiesAt(h), name)) ?? nothingAt(child(propertiesAt(h), name));
    if (dir === 'request' && flag(hp, name, 'readOnly')) {
      ctx.report('request-property-became-read-only', inHead(keyAt(headProp, 'readOnly')), `${where}.${name}: became read-only`);
      continue;
    }
    if (dir === 'response' && flag(hp, name, 'writeOnly')) {
      ctx.report('response-property-became-write-only', inHead(keyAt(headProp, 'writeOnly')), `${where}.${name}: became write-only, so no longer returned`);
      continue;
    }
    const baseProp = resolve(ctx.base, bp[name], child(propertiesAt(b), name)) ?? nothingAt(child(propertiesAt(b), name));
    compareLifecycle(ctx, propPrefix, baseProp.node, headProp, `${where}.${name}`);
    compareSchema(ctx, dir, propPrefix, bp[name], child(propertiesAt(b), name), hp[name], child(propertiesAt(h), name), `${where}.${name}`);
  }

  const [ba, ha] = [b.node.additionalProperties, h.node.additionalProperties];
  const open = (v: unknown) => v === undefined || v === true;
  if (dir === 'request' && ha === false && ba !== false) {
    ctx.report(`${prefix}-additional-properties-restricted`, inHead(keyAt(h, 'additionalProperties')), `${where}: properties it does not name are now refused`);
  } else if (dir === 'response' && ((ba === false && ha !== false) || (isNode(ba) && open(ha)))) {
    ctx.report(`${prefix}-additional-properties-widened`, inHead(keyAt(h, 'additionalProperties')), `${where}: now allows properties the released contract ruled out`);
  } else if ((isNode(ba) || isNode(ha)) && !(dir === 'request' && ba === false) && !(dir === 'response' && ha === false)) {
    // Skipped: a request that took no unknown property cannot narrow there, nor can a response that returns none widen.
    compareSchema(ctx, dir, propPrefix, ba, child(b.pointer, 'additionalProperties'), ha, keyAt(h, 'additionalProperties'), `${where}.*`);
  }
}
