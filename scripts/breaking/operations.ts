// The document level: servers, security, operations, parameters, request bodies and
// responses. Schemas are handed to schema.ts with the direction they travel in.
import { Context, type Finding, inBase, inHead, type Place } from './context.js';
import { child, keyAt, type Located, listOf, type Node, nodeOf, resolve } from './document.js';
import { compareLifecycle, removalProblem } from './lifecycle.js';
import { compareSchema } from './schema.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

interface Operation {
  op: Located;
  item: Located;
  path: string;
  name: string;
}

/** Operations keyed by method and path template with parameter names blanked: renaming {petId} moves no URL. */
function operationsOf(doc: Node): Map<string, Operation> {
  const found = new Map<string, Operation>();
  for (const [path, value] of Object.entries(nodeOf(doc.paths))) {
    const item = resolve(doc, value, child('/paths', path));
    if (!item) continue;
    for (const method of METHODS) {
      const op = resolve(doc, item.node[method], child(item.pointer, method));
      if (!op) continue;
      const name = typeof op.node.operationId === 'string' ? op.node.operationId : `${method.toUpperCase()} ${path}`;
      found.set(`${method} ${path.replace(/\{[^}]*\}/g, '{}')}`, { op, item, path, name });
    }
  }
  return found;
}

export function compareDocuments(base: Node, head: Node, today: string): Finding[] {
  const ctx = new Context(base, head, today);
  compareServers(ctx, base.servers, '/servers', head.servers, '/servers', 'the API');
  for (const name of Object.keys(nodeOf(base.webhooks)).filter((n) => !(n in nodeOf(head.webhooks)))) {
    ctx.report('webhook-removed', inBase(child('/webhooks', name), '/webhooks'), `webhook ${name} removed`);
  }
  const headOps = operationsOf(head);
  for (const [key, before] of operationsOf(base)) {
    // Our policy: an experimental operation may change or disappear freely.
    if (before.op.node['x-stability'] === 'experimental') continue;
    const after = headOps.get(key);
    if (after) {
      compareOperation(ctx, before, after);
      continue;
    }
    const problem = removalProblem(ctx, before.op.node);
    if (problem) {
      const rule = before.op.node.deprecated === true ? 'api-removed-before-sunset' : 'api-removed-without-deprecation';
      ctx.report(rule, inBase(before.op.pointer, child('/paths', before.path)), `${before.name} (${key.split(' ')[0]?.toUpperCase()} ${before.path}): removed ${problem}`);
    }
  }
  return ctx.findings;
}

function compareOperation(ctx: Context, before: Operation, after: Operation): void {
  const { op: b } = before;
  const { op: h, name } = after;
  if (b.node.operationId !== undefined && b.node.operationId !== h.node.operationId) {
    ctx.report('api-operation-id-changed', inHead(keyAt(h, 'operationId')), `${before.name}: operationId changed to ${String(h.node.operationId ?? 'none')}`);
  }
  compareLifecycle(ctx, 'api', b.node, h, name);
  compareSecurity(ctx, before, after);
  const servers = (o: Operation, doc: Node) =>
    o.op.node.servers !== undefined ? { list: o.op.node.servers, at: child(o.op.pointer, 'servers') } : o.item.node.servers !== undefined ? { list: o.item.node.servers, at: child(o.item.pointer, 'servers') } : { list: doc.servers, at: '/servers' };
  const [bs, hs] = [servers(before, ctx.base), servers(after, ctx.head)];
  if (bs.at !== '/servers' || hs.at !== '/servers') compareServers(ctx, bs.list, bs.at, hs.list, hs.at, name);
  compareParameters(ctx, before, after);
  compareRequestBody(ctx, before, after);
  compareResponses(ctx, before, after);
}

// Servers -----------------------------------------------------------------------------

function compareServers(ctx: Context, base: unknown, basePointer: string, head: unknown, headPointer: string, where: string): void {
  const listed = (v: unknown) => (listOf(v).length > 0 ? listOf(v).map(nodeOf) : [{ url: '/' }]);
  const url = (s: Node) => String(s.url ?? '/').replace(/\/+$/, '');
  const headServers = listed(head);
  // Two servers may share a URL template (production and staging differ by a variable's
  // default); the released one is kept if any head server with its URL keeps its variables.
  const variableChange = (server: Node, next: Node): string | undefined => {
    for (const [name, value] of Object.entries(nodeOf(server.variables))) {
      const [variable, after] = [nodeOf(value), nodeOf(nodeOf(next.variables)[name])];
      // Without an enum a variable takes any value: a client may use a host of its own.
      if (!Array.isArray(variable.enum) && Array.isArray(after.enum)) return `variable ${name} is now limited to ${after.enum.join(', ')}`;
      const lost = listOf(variable.enum).filter((v) => Array.isArray(after.enum) && !after.enum.includes(v));
      if (lost.length > 0) return `variable ${name} no longer allows ${lost.join(', ')}`;
      if (after.default !== variable.default) return `variable ${name} default changed from ${String(variable.default)} to ${String(after.default ?? 'none')}`;
    }
    return undefined;
  };
  // A client reaches the address a template gives with the values it is offered: its
  // defaults, and each value of an enum. A template may be written out in full as those
  // addresses once the template itself is gone: every address the released contract named
  // is still named, and a generated SDK gets a concrete base URL instead of '{host}'.
  const concrete = new Set(headServers.filter((s) => Object.keys(nodeOf(s.variables)).length === 0).map(url));
  const addresses = (server: Node): string[] =>
    Object.entries(nodeOf(server.variables)).reduce(
      (urls, [name, value]) => {
        const variable = nodeOf(value);
        const values = Array.isArray(variable.enum) ? variable.enum.map(String) : [String(variable.default)];
        return urls.flatMap((u) => values.map((v) => u.replaceAll(`{${name}}`, v)));
      },
      [url(server)],
    );
  const writtenOut = (server: Node) => Object.keys(nodeOf(server.variables)).length > 0 && addresses(server).every((a) => concrete.has(a));
  listed(base).forEach((server, i) => {
    const candidates = headServers.map((s, j) => [s, j] as const).filter(([s]) => url(s) === url(server));
    const first = candidates[0];
    if (!first) {
      if (writtenOut(server)) return;
      ctx.report('api-server-removed', inBase(child(basePointer, i), headPointer), `${where}: server ${String(server.url)} is no longer listed`);
      return;
    }
    if (candidates.some(([s]) => variableChange(server, s) === undefined)) return;
    ctx.report('api-server-variable-changed', inHead(child(headPointer, first[1], 'variables')), `${where}: server ${String(server.url)} ${variableChange(server, first[0])}`);
  });
}

// Security ----------------------------------------------------------------------------

/**
 * The ways a client may authenticate to an operation, one of which it must satisfy. No
 * requirement at all (`security: []`, or none written) is one way: sending no credential.
 */
function requirementsOf(doc: Node, o: Operation): { alternatives: Node[]; at: string } {
  const [list, at] = o.op.node.security !== undefined ? [o.op.node.security, keyAt(o.op, 'security')] : [doc.security, '/security'];
  const alternatives = listOf(list).map(nodeOf);
  return { alternatives: alternatives.length > 0 ? alternatives : [{}], at };
}

function compareSecurity(ctx: Context, before: Operation, after: Operation): void {
  const b = requirementsOf(ctx.base, before);
  const h = requirementsOf(ctx.head, after);
  const scopes = (req: Node, scheme: string) => listOf(req[scheme]).map(String);
  // A scheme's name never reaches the wire: a renamed scheme that asks for the same credential is the same scheme.
  const signature = (doc: Node, name: string) => {
    const scheme = resolve(doc, nodeOf(nodeOf(doc.components).securitySchemes)[name], child('/components/securitySchemes', name));
    return scheme ? JSON.stringify(schemeShape(scheme.node)) : `missing ${name}`;
  };
  const sameScheme = (headName: string, baseName: string) => headName === baseName || signature(ctx.head, headName) === signature(ctx.base, baseName);
  // A client satisfies one released alternative; the changed operation must accept it through one of its own.
  // A credential of the released contract also holds the scopes the head's scheme says
  // earlier credentials hold (`x-scopes-of-earlier-credentials`): scopes introduced with that
  // promise take nothing from a client that authenticates as it did.
  const earlier = (name: string) => {
    const scheme = resolve(ctx.head, nodeOf(nodeOf(ctx.head.components).securitySchemes)[name], child('/components/securitySchemes', name));
    return scheme ? listOf(scheme.node['x-scopes-of-earlier-credentials']).map(String) : [];
  };
  const held = (has: Node, bs: string, hs: string) => [...scopes(has, bs), ...earlier(hs)];
  const covers = (need: Node, has: Node, withScopes: boolean) =>
    Object.keys(need).every((hs) => Object.keys(has).some((bs) => sameScheme(hs, bs) && (!withScopes || scopes(need, hs).every((x) => held(has, bs, hs).includes(x)))));
  for (const alternative of b.alternatives) {
    if (h.alternatives.some((need) => covers(need, alternative, true))) continue;
    const scopeOnly = h.alternatives.some((need) => covers(need, alternative, false));
    const wanted = h.alternatives.map((a) => Object.keys(a).join(' + ') || 'none').join(' or ');
    ctx.report(scopeOnly ? 'api-security-scope-added' : 'api-security-requirement-added', inHead(h.at), `${after.name}: a client authenticating with ${Object.keys(alternative).join(' + ') || 'nothing'} is no longer accepted (requires ${wanted})`);
  }
  const [bSchemes, hSchemes] = [nodeOf(nodeOf(ctx.base.components).securitySchemes), nodeOf(nodeOf(ctx.head.components).securitySchemes)];
  const used = new Set(b.alternatives.flatMap((a) => Object.keys(a)));
  const stillUsed = new Set(h.alternatives.flatMap((a) => Object.keys(a)));
  for (const name of [...used].filter((n) => stillUsed.has(n))) {
    const pointer = child('/components/securitySchemes', name);
    const bs = resolve(ctx.base, bSchemes[name], pointer);
    const hs = resolve(ctx.head, hSchemes[name], pointer);
    if (!bs) continue;
    const change = hs ? schemeChange(bs.node, hs.node) : 'removed';
    if (change) ctx.report('api-security-scheme-changed', hs ? inHead(hs.pointer) : inBase(bs.pointer, '/components/securitySchemes'), `security scheme ${name}: ${change}`);
  }
}

const SCHEME_KEYS = ['type', 'scheme', 'in', 'name', 'openIdConnectUrl'];
// HTTP auth schemes and header names are case-insensitive.
const normalized = (s: Node, key: string) => (typeof s[key] === 'string' && (key === 'scheme' || (key === 'name' && s.in === 'header')) ? (s[key] as string).toLowerCase() : s[key]);

/** What a client must send to satisfy a scheme (descriptions and bearerFormat are prose). */
function schemeShape(s: Node): unknown[] {
  const flows = Object.entries(nodeOf(s.flows)).map(([flow, value]) => [flow, nodeOf(value).authorizationUrl, nodeOf(value).tokenUrl]);
  return [...SCHEME_KEYS.map((key) => normalized(s, key)), flows];
}

/** How a security scheme changed in a way that changes what a client must send, if it did. */
function schemeChange(b: Node, h: Node): string | undefined {
  for (const key of SCHEME_KEYS) {
    if (normalized(b, key) !== normalized(h, key)) return `${key} changed from ${String(b[key] ?? 'none')} to ${String(h[key] ?? 'none')}`;
  }
  for (const [flow, value] of Object.entries(nodeOf(b.flows))) {
    const [bf, hf] = [nodeOf(value), nodeOf(nodeOf(h.flows)[flow])];
    if (!(flow in nodeOf(h.flows))) return `OAuth flow ${flow} removed`;
    for (const key of ['authorizationUrl', 'tokenUrl']) if (bf[key] !== hf[key]) return `OAuth flow ${flow} ${key} changed`;
    const lost = Object.keys(nodeOf(bf.scopes)).filter((s) => !(s in nodeOf(hf.scopes)));
    if (lost.length > 0) return `OAuth flow ${flow} lost the scopes ${lost.join(', ')}`;
  }
  return undefined;
}

// Parameters --------------------------------------------------------------------------

interface Parameter {
  at: Located;
  name: string;
  in: string;
  /** The list it is written in (the path item's or the operation's). */
  list: string;
}

/** Parameters of an operation (its path item's too), keyed by where a client puts them. */
function parametersOf(doc: Node, o: Operation): Map<string, Parameter> {
  const found = new Map<string, Parameter>();
  const pathNames = [...o.path.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
  for (const owner of [o.item, o.op]) {
    listOf(owner.node.parameters).forEach((value, i) => {
      const list = keyAt(owner, 'parameters');
      const at = resolve(doc, value, child(list, i));
      if (!at) return;
      const name = String(at.node.name);
      const where = String(at.node.in);
      // A path parameter is known by its place in the URL, a header by its name in any case.
      const key = where === 'path' ? `path #${pathNames.indexOf(name)}` : where === 'header' ? `header ${name.toLowerCase()}` : `${where} ${name}`;
      found.set(key, { at, name, in: where, list });
    });
  }
  return found;
}

const styleOf = (p: Node) => {
  const style = p.style ?? (p.in === 'query' || p.in === 'cookie' ? 'form' : 'simple');
  return { style, explode: p.explode ?? style === 'form', allowReserved: p.allowReserved ?? false, content: Object.keys(nodeOf(p.content)).join(',') };
};

function parameterSchema(p: Located): [unknown, string] {
  if (p.node.schema !== undefined) return [p.node.schema, keyAt(p, 'schema')];
  const [type, media] = Object.entries(nodeOf(p.node.content))[0] ?? [];
  return [nodeOf(media).schema, child(keyAt(p, 'content'), type ?? '', 'schema')];
}

function compareParameters(ctx: Context, before: Operation, after: Operation): void {
  const b = parametersOf(ctx.base, before);
  const h = parametersOf(ctx.head, after);
  const name = after.name;
  const moved = new Set<string>();
  for (const [key, p] of b) {
    const next = h.get(key);
    if (!next) {
      const elsewhere = [...h.entries()].find(([k, q]) => q.name === p.name && !b.has(k));
      if (elsewhere) {
        moved.add(elsewhere[0]);
        ctx.report('request-parameter-location-changed', inHead(keyAt(elsewhere[1].at, 'in')), `${name}: parameter ${p.name} moved from ${p.in} to ${elsewhere[1].in}`);
        continue;
      }
      const problem = removalProblem(ctx, p.at.node);
      // Missing from the same list in the head (the path item's or the operation's), or from the operation.
      const near = p.list.startsWith(before.op.pointer) ? keyAt(after.op, 'parameters') : keyAt(after.item, 'parameters');
      if (problem) ctx.report('request-parameter-removed', inBase(p.at.ownPointer, near), `${name}: ${p.in} parameter ${p.name} removed ${problem}`);
      continue;
    }
    const where = `${name} ${p.in} parameter ${p.name}`;
    if (p.at.node.required !== true && next.at.node.required === true) ctx.report('request-parameter-became-required', inHead(keyAt(next.at, 'required')), `${where}: now required`);
    const [bs, hs] = [styleOf(p.at.node), styleOf(next.at.node)];
    const changed = (Object.keys(bs) as (keyof typeof bs)[]).filter((k) => bs[k] !== hs[k]);
    if (changed.length > 0) ctx.report('request-parameter-style-changed', inHead(keyAt(next.at, changed[0] ?? 'style')), `${where}: ${changed.map((k) => `${k} ${String(bs[k])} -> ${String(hs[k])}`).join(', ')}`);
    compareLifecycle(ctx, 'request-parameter', p.at.node, next.at, where);
    const [bSchema, bAt] = parameterSchema(p.at);
    const [hSchema, hAt] = parameterSchema(next.at);
    compareSchema(ctx, 'request', 'request-parameter', bSchema, bAt, hSchema, hAt, where);
  }
  for (const [key, p] of h) {
    if (b.has(key) || moved.has(key)) continue;
    if (p.at.node.required === true || p.in === 'path') ctx.report('request-parameter-added-required', inHead(p.at.ownPointer), `${name}: new required ${p.in} parameter ${p.name}`);
  }
}

// Request bodies ----------------------------------------------------------------------

function compareRequestBody(ctx: Context, before: Operation, after: Operation): void {
  const b = resolve(ctx.base, before.op.node.requestBody, child(before.op.pointer, 'requestBody'));
  const h = resolve(ctx.head, after.op.node.requestBody, keyAt(after.op, 'requestBody'));
  const name = after.name;
  if (!b) {
    if (h?.node.required === true) ctx.report('request-body-added-required', inHead(h.ownPointer), `${name}: a required request body was added`);
    return;
  }
  if (!h) {
    ctx.report('request-body-removed', inBase(b.ownPointer, after.op.pointer), `${name}: the request body was removed`);
    return;
  }
  if (b.node.required !== true && h.node.required === true) ctx.report('request-body-became-required', inHead(keyAt(h, 'required')), `${name}: the request body is now required`);
  compareContent(ctx, 'request', b, h, `${name} request body`);
}

/** Media types of a request body or a response, and the schema under each. */
function compareContent(ctx: Context, dir: 'request' | 'response', b: Located, h: Located, where: string): void {
  const [bc, hc] = [nodeOf(b.node.content), nodeOf(h.node.content)];
  for (const [type, media] of Object.entries(bc)) {
    const place: Place = inBase(child(keyAt(b, 'content'), type), keyAt(h, 'content'));
    if (!(type in hc)) {
      ctx.report(`${dir === 'request' ? 'request-body' : 'response'}-media-type-removed`, place, `${where}: media type ${type} removed`);
      continue;
    }
    const [bAt, hAt] = [child(keyAt(b, 'content'), type, 'schema'), child(keyAt(h, 'content'), type, 'schema')];
    compareSchema(ctx, dir, `${dir}-body`, nodeOf(media).schema, bAt, nodeOf(hc[type]).schema, hAt, `${where} (${type})`);
  }
}

// Responses ---------------------------------------------------------------------------

function compareResponses(ctx: Context, before: Operation, after: Operation): void {
  const [bResponses, hResponses] = [nodeOf(before.op.node.responses), nodeOf(after.op.node.responses)];
  const [bAt, hAt] = [child(before.op.pointer, 'responses'), keyAt(after.op, 'responses')];
  for (const [status, value] of Object.entries(bResponses)) {
    const where = `${after.name} ${status}`;
    if (!(status in hResponses)) {
      // A client may not rely on an error status it never met; a success it expects is another matter.
      if (status.startsWith('2')) ctx.report('response-success-status-removed', inBase(child(bAt, status), hAt), `${where}: success status removed`);
      continue;
    }
    const b = resolve(ctx.base, value, child(bAt, status));
    const h = resolve(ctx.head, hResponses[status], child(hAt, status));
    if (!b || !h) continue;
    compareHeaders(ctx, b, h, where);
    compareContent(ctx, 'response', b, h, where);
  }
}

function compareHeaders(ctx: Context, b: Located, h: Located, where: string): void {
  const byName = (r: Located) => new Map(Object.entries(nodeOf(r.node.headers)).map(([n, v]) => [n.toLowerCase(), { name: n, value: v }]));
  const [bh, hh] = [byName(b), byName(h)];
  for (const [key, { name, value }] of bh) {
    const bAt = resolve(ctx.base, value, child(keyAt(b, 'headers'), name));
    if (!bAt) continue;
    const next = hh.get(key);
    const required = bAt.node.required === true;
    if (!next) {
      ctx.report(`response-header-removed-${required ? 'required' : 'optional'}`, inBase(bAt.ownPointer, keyAt(h, 'headers')), `${where}: ${required ? 'required ' : ''}header ${name} removed`);
      continue;
    }
    const hAt = resolve(ctx.head, next.value, child(keyAt(h, 'headers'), next.name));
    if (!hAt) continue;
    if (required && hAt.node.required !== true) ctx.report('response-header-became-optional', inHead(keyAt(hAt, 'required')), `${where}: header ${name} is no longer required`);
    compareSchema(ctx, 'response', 'response-header', bAt.node.schema, keyAt(bAt, 'schema'), hAt.node.schema, keyAt(hAt, 'schema'), `${where} header ${name}`);
  }
}
