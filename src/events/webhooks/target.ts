// Where a webhook may be delivered: the URL rules checked when an endpoint is saved, and the
// `lookup` every delivery connects through, so that the address is checked again at
// connection time (a name that resolved to a public address at save and to a private one
// later gains nothing: DNS rebinding). Names are resolved only through the injected
// `Resolver`; special-use names and names of one label are refused before any lookup, and
// a lookup at save that takes longer than 3 seconds is refused (the request answers; the
// lookup itself, on libuv's threadpool with the system resolver, ends when the system's
// resolver gives up).
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { classifyAddress, describeKind } from './address.js';

/**
 * Every address a name resolves to (dns.lookup with `all: true` by default; tests inject a
 * fake). `purpose` says who asks: the check when an endpoint is saved, or a delivery about to
 * connect. The system's resolver answers both alike; a test's fake answers a delivery only
 * with loopback addresses (test/helper.ts refuses any other), so no test connects elsewhere.
 */
export type Resolver = (hostname: string, purpose: 'save' | 'connect') => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Names that never reach a public host (RFC 6761, 6762, 7686, 8375, and `.internal`). */
const SPECIAL_USE = /(^|\.)(localhost|example|invalid|test|local|internal|home\.arpa|onion)\.?$/i;

/** How long the check at save waits for a name to resolve (a lookup that hangs is refused, not waited for). */
export const SAVE_RESOLVE_TIMEOUT_MS = 3000;

export interface UrlRefusal {
  rule: 'https' | 'userinfo' | 'port' | 'address' | 'resolve';
  message: string;
}

/** The host of a parsed URL as an address literal (brackets removed), or undefined for a name. */
export function literalOf(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}

/** The authority's port of an absolute URL as written (after `host:`), if it has one. */
const WRITTEN_PORT = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(?:\[[^\]]*\]|[^/?#:]*):([^/?#]*)/;

/** Why a URL that does not parse is refused: its port when that is what is wrong, else its form. */
function unparsable(text: string): UrlRefusal {
  const port = WRITTEN_PORT.exec(text)?.[1];
  if (port !== undefined && port !== '' && !(/^\d+$/.test(port) && Number(port) <= 65535)) {
    return { rule: 'port', message: `has the port ${port.length > 10 ? `${port.slice(0, 10)}...` : port}, which is not a port: give a port from 1 to 65535, or none` };
  }
  return { rule: 'https', message: 'is not a URL that can be read: give an absolute URL, such as https://receiver.example/hooks' };
}

/** What a developer whose receiver runs on their own machine or network is told. */
const ON_A_DEVELOPMENT_MACHINE = 'on a development machine, WEBHOOK_ALLOW_PRIVATE=true allows it';
/** The kinds of address a development receiver has: the hint above is given for them. */
const DEVELOPMENT_KINDS: ReadonlySet<string> = new Set(['loopback', 'private']);

const refusedAddress = (shownHost: string, address: string, kind: Parameters<typeof describeKind>[0]): UrlRefusal => {
  const hint = DEVELOPMENT_KINDS.has(kind) ? ` (${ON_A_DEVELOPMENT_MACHINE})` : '';
  return {
    rule: 'address',
    message:
      shownHost === address
        ? `${address} is ${describeKind(kind)}, which deliveries never call: give a URL whose host is a public address${hint}`
        : `${shownHost} resolves to ${address}, ${describeKind(kind)}, which deliveries never call: give a URL whose host resolves only to public addresses${hint}`,
  };
};

/**
 * Why `text` may not be an endpoint's URL, or undefined when it may. With `allowPrivate`
 * (WEBHOOK_ALLOW_PRIVATE) only the form is checked: http or https, no user name or password.
 */
export async function checkUrl(text: string, options: { allowPrivate: boolean; resolve: Resolver; timeoutMs?: number }): Promise<UrlRefusal | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return unparsable(text);
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol) || url.hostname === '') {
    const hint = url.protocol === 'http:' ? ` (http: ${ON_A_DEVELOPMENT_MACHINE})` : '';
    return { rule: 'https', message: options.allowPrivate ? 'must be an http or https URL' : `must be an https URL${hint}` };
  }
  if (url.username !== '' || url.password !== '') return { rule: 'userinfo', message: 'must not hold a user name or password: give the URL without them' };
  if (url.port === '0') return { rule: 'port', message: 'port 0 is no port a receiver listens on: give the port your receiver listens on, or none' };
  if (options.allowPrivate) return undefined;
  const literal = literalOf(url);
  if (literal !== undefined) {
    const judged = classifyAddress(literal);
    return judged.public ? undefined : refusedAddress(literal, literal, judged.kind);
  }
  const host = url.hostname;
  const shownHost = host.length > 60 ? `${host.slice(0, 60)}...` : host;
  if (SPECIAL_USE.test(host)) {
    const hint = /(^|\.)localhost\.?$/i.test(host) ? ` (${ON_A_DEVELOPMENT_MACHINE})` : '';
    return { rule: 'address', message: `${shownHost} is a special-use name, which deliveries never call: give a URL whose host is a public name or address${hint}` };
  }
  if (!host.replace(/\.$/, '').includes('.')) {
    // A name of one label: no public receiver has one (ICANN allows no dotless names), and
    // the system's resolver would ask the local network's search domains for it.
    return /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\\]/.test(text.trim())
      ? { rule: 'address', message: `${shownHost} is a name without a domain, which deliveries never call: give a URL whose host is a public name, such as receiver.example.com` }
      : { rule: 'https', message: 'has no host where one is written (right after "https://"): give an absolute URL, such as https://receiver.example/hooks' };
  }
  let addresses: LookupAddress[];
  let timer: NodeJS.Timeout | undefined;
  const timeoutMs = options.timeoutMs ?? SAVE_RESOLVE_TIMEOUT_MS;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
  });
  try {
    const found = await Promise.race([options.resolve(host, 'save'), late]);
    if (found === 'late') {
      return { rule: 'resolve', message: `${shownHost} did not resolve within ${timeoutMs / 1000} seconds: try again later, or give a URL whose host resolves` };
    }
    addresses = found;
  } catch {
    addresses = [];
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) return { rule: 'resolve', message: `${shownHost} does not resolve: give a URL whose host has a public address` };
  for (const { address } of addresses) {
    const judged = classifyAddress(address);
    if (!judged.public) return refusedAddress(shownHost, address, judged.kind);
  }
  return undefined;
}

/** The error a delivery's connection fails with when the address is one deliveries never call. */
export class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
  constructor(address: string) {
    super(`${address} is not a public address`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request: resolves with `resolve` and refuses (RefusedAddressError)
 * when any address is not public, before anything connects. With `allowPrivate`, every
 * address passes.
 */
export function guardedLookup(resolve: Resolver, allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, 'connect').then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }), []);
        const refused = allowPrivate ? undefined : wanted.find((a) => !classifyAddress(a.address).public);
        if (refused) return callback(new RefusedAddressError(refused.address), []);
        if (options.all) return callback(null, wanted);
        const [first] = wanted as [LookupAddress];
        return callback(null, first.address, first.family);
      },
      (error: unknown) => callback(Object.assign(new Error(`${hostname} did not resolve`), { code: (error as NodeJS.ErrnoException).code ?? 'ENOTFOUND' }), []),
    );
  };
}
