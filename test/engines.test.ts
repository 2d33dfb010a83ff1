// `engines` in package.json says which Node versions are tested, no more: one `^x.y.z` per
// major, each the version CI runs (scripts/with-node.sh pins 22 and 24).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { root } from './process.js';

const engines = (JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { engines: { node: string } }).engines.node;
const floors = engines.split('||').map((part) => /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(part)?.slice(1).map(Number) ?? part);
const pinned = Object.fromEntries([...readFileSync(`${root}/scripts/with-node.sh`, 'utf8').matchAll(/^\s*(\d+)\) version=(\d+\.\d+\.\d+) /gm)].map((m) => [m[1], m[2]]));

describe('engines', () => {
  it('is ^x.y.z for Node 22 and 24, and nothing else', () => {
    expect(floors.map((floor) => (Array.isArray(floor) ? floor[0] : floor))).toEqual([22, 24]);
  });

  it("starts Node 22 and 24 at the versions scripts/with-node.sh pins (CI's)", () => {
    expect(pinned).toEqual({ '22': expect.any(String), '24': expect.any(String) });
    for (const floor of floors) if (Array.isArray(floor)) expect(floor.join('.')).toBe(pinned[String(floor[0])]);
  });

  // In CI every gate runs on a Node that engines names; elsewhere a newer patch release, or
  // an older one, runs the suite as well, and `npm ci` only warns.
  it.runIf(process.env.CI === 'true')('in CI, names the Node running this suite', () => {
    const [major, minor, patch] = process.versions.node.split('.').map(Number) as [number, number, number];
    const floor = floors.find((f): f is number[] => Array.isArray(f) && f[0] === major);
    expect(floor, `Node ${process.versions.node} is not in engines (${engines})`).toBeDefined();
    const [, fMinor, fPatch] = floor as [number, number, number];
    expect(minor > fMinor || (minor === fMinor && patch >= fPatch), `Node ${process.versions.node} is older than engines' ^${floor?.join('.')}`).toBe(true);
  });
});
