// Reading an OpenAPI document as plain data: objects, local $refs resolved while keeping
// track of the JSON pointer each value was read from (a finding names where to look).
export type Node = Record<string, unknown>;

export const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
export const nodeOf = (v: unknown): Node => (isNode(v) ? v : {});
export const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const stringsOf = (v: unknown): string[] => listOf(v).filter((x): x is string => typeof x === 'string');

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (key: string) => key.replace(/~1/g, '/').replace(/~0/g, '~');

/** `child('/paths', '/pets')` is `/paths/~1pets`. */
export const child = (pointer: string, ...keys: (string | number)[]) => pointer + keys.map((k) => `/${escape(String(k))}`).join('');
export const segments = (pointer: string) => (pointer === '' ? [] : pointer.slice(1).split('/').map(unescape));

/** A value with the pointer it was read from, after following $refs. */
export interface Located {
  /** The value, with the $ref's sibling keywords laid over its target. */
  node: Node;
  /** Where the target is. */
  pointer: string;
  /** The value as written where it was met (a $ref and its siblings), and where that is. */
  own: Node;
  ownPointer: string;
  /**
   * For a schema merged from an allOf (see allof.ts): where each keyword of `node` is written,
   * and where each of its properties is, since they come from several places.
   */
  origins?: Record<string, string>;
  properties?: Record<string, string>;
}

/** Where a keyword of a located value is written: beside the $ref, in the target, or (when absent) the value itself. */
export function keyAt(at: Located, key: string): string {
  const origin = at.origins?.[key];
  if (origin !== undefined) return origin;
  if (key in at.own) return child(at.ownPointer, key);
  if (key in at.node) return child(at.pointer, key);
  return at.pointer;
}

/** Where a property of a located object schema is written. */
export const propertyAt = (at: Located, name: string): string => at.properties?.[name] ?? child(keyAt(at, 'properties'), name);

/** An empty schema (one that allows anything) standing where none is written. */
export const nothingAt = (pointer: string): Located => ({ node: {}, pointer, own: {}, ownPointer: pointer });

export class RefError extends Error {}

/**
 * Follows local $refs. OpenAPI 3.1 lets a $ref carry sibling keywords; they are laid over
 * the target (our contract uses that for descriptions), and the pointer stays the target's
 * so that a finding names the shared definition that changed.
 */
export function resolve(doc: Node, value: unknown, pointer: string): Located | undefined {
  let node = value;
  let at = pointer;
  let siblings: Node = {};
  for (let hops = 0; isNode(node) && typeof node.$ref === 'string'; hops++) {
    const ref = node.$ref;
    if (!ref.startsWith('#')) throw new RefError(`${at}: only local $refs are supported, found ${ref}`);
    if (hops > 32) throw new RefError(`${at}: $ref cycle`);
    const { $ref: _ref, ...rest } = node;
    siblings = { ...rest, ...siblings };
    at = ref.slice(1);
    node = segments(at).reduce<unknown>((parent, key) => (isNode(parent) || Array.isArray(parent) ? (parent as Node)[key] : undefined), doc);
    if (node === undefined) throw new RefError(`${pointer}: $ref ${ref} points at nothing`);
  }
  if (!isNode(node)) return undefined;
  const own = isNode(value) ? value : {};
  return { node: Object.keys(siblings).length > 0 ? { ...node, ...siblings } : node, pointer: at, own, ownPointer: pointer };
}

/** The longest part of a pointer that names something in the document (the pointer itself when it does). */
export function nearest(doc: Node, pointer: string): string {
  let node: unknown = doc;
  let found = '';
  for (const key of segments(pointer)) {
    if ((!isNode(node) && !Array.isArray(node)) || !(key in (node as Node))) break;
    node = (node as Node)[key];
    found = child(found, key);
  }
  return found;
}

/** Whether a pointer names something in the document. */
export const exists = (doc: Node, pointer: string): boolean => nearest(doc, pointer) === pointer;
