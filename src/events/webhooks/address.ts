// Which IP addresses webhook deliveries may call: a pure classifier, no DNS, no I/O.
//
// Refused (the ranges Svix refuses, and the IANA special-purpose registries for IPv4 and
// IPv6): loopback, private, link-local, shared (100.64.0.0/10), multicast, reserved
// (documentation, benchmarking, IETF protocol assignments, 240/4, broadcast, discard,
// anything IPv6 outside global unicast 2000::/3) and unspecified. An IPv6 address that
// carries an IPv4 address (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) is
// judged by the IPv4 address it carries. test/webhooks/address.test.ts holds every range.
import { BlockList, isIP } from 'node:net';

export type RefusedKind = 'loopback' | 'private' | 'link-local' | 'shared' | 'multicast' | 'reserved' | 'unspecified';
export type Classification = { public: true } | { public: false; kind: RefusedKind };

const V4: ReadonlyArray<readonly [string, number, RefusedKind]> = [
  ['0.0.0.0', 8, 'reserved'], // "this network"; 0.0.0.0 itself is unspecified (below)
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // TEST-NET-1
  ['192.31.196.0', 24, 'reserved'], // AS112
  ['192.52.193.0', 24, 'reserved'], // AMT
  ['192.88.99.0', 24, 'reserved'], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16, 'private'],
  ['192.175.48.0', 24, 'reserved'], // direct delegation AS112
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'reserved'], // TEST-NET-2
  ['203.0.113.0', 24, 'reserved'], // TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // future use, and 255.255.255.255 (broadcast)
];

const V6: ReadonlyArray<readonly [string, number, RefusedKind]> = [
  ['::', 96, 'reserved'], // IPv4-compatible (deprecated); :: and ::1 are decided before
  ['64:ff9b:1::', 48, 'reserved'], // local-use NAT64
  ['100::', 64, 'reserved'], // discard-only
  ['2001::', 23, 'reserved'], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32, 'reserved'], // documentation
  ['3fff::', 20, 'reserved'], // documentation
  ['5f00::', 16, 'reserved'], // segment routing
  ['fc00::', 7, 'private'], // unique local
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // site-local (deprecated)
  ['ff00::', 8, 'multicast'],
];

function blockLists(ranges: ReadonlyArray<readonly [string, number, RefusedKind]>, family: 'ipv4' | 'ipv6'): Array<[BlockList, RefusedKind]> {
  return ranges.map(([network, prefix, kind]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return [list, kind];
  });
}
const V4_LISTS = blockLists(V4, 'ipv4');
const V6_LISTS = blockLists(V6, 'ipv6');
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (given valid, as `isIP` judges it). */
function groupsOf(address: string): number[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  // A trailing dotted IPv4 part is two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const before = parse(head);
  const after = parse(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - before.length - after.length).fill(0);
  return [...before, ...zeros, ...after];
}

const v4Of = (high: number, low: number): string => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

function classifyV4(address: string): Classification {
  if (address === '0.0.0.0') return { public: false, kind: 'unspecified' };
  for (const [list, kind] of V4_LISTS) if (list.check(address, 'ipv4')) return { public: false, kind };
  return { public: true };
}

function classifyV6(address: string): Classification {
  const g = groupsOf(address);
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const upper = [g0, g1, g2, g3, g4].every((x) => x === 0);
  if (upper && g5 === 0 && g6 === 0 && g7 === 0) return { public: false, kind: 'unspecified' };
  if (upper && g5 === 0 && g6 === 0 && g7 === 1) return { public: false, kind: 'loopback' };
  // IPv4-mapped ::ffff:a.b.c.d, and the IPv4-translated form ::ffff:0:a.b.c.d.
  if (upper && g5 === 0xffff) return classifyV4(v4Of(g6, g7));
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return classifyV4(v4Of(g6, g7));
  // NAT64 well-known prefix 64:ff9b::/96.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyV4(v4Of(g6, g7));
  // 6to4 2002:aabb:ccdd::/48 carries aa.bb.cc.dd.
  if (g0 === 0x2002) return classifyV4(v4Of(g1, g2));
  const canonical = g.map((x) => x.toString(16)).join(':');
  for (const [list, kind] of V6_LISTS) if (list.check(canonical, 'ipv6')) return { public: false, kind };
  // Anything outside global unicast (2000::/3) is not an address anyone may be called on.
  if (!GLOBAL_UNICAST.check(canonical, 'ipv6')) return { public: false, kind: 'reserved' };
  return { public: true };
}

/** Whether deliveries may call `address` (an IPv4 or IPv6 literal, no brackets); anything that is not an IP address is not public. */
export function classifyAddress(address: string): Classification {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  switch (isIP(bare.split('%')[0] ?? '')) {
    case 4:
      return classifyV4(bare);
    case 6:
      return classifyV6(bare);
    default:
      return { public: false, kind: 'reserved' };
  }
}

/** "a private address", "an unspecified address", ... */
export function describeKind(kind: RefusedKind): string {
  return `${kind === 'unspecified' ? 'an' : 'a'} ${kind} address`;
}
