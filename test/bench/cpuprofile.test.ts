// How bench/profile.ts reads a CPU profile into time per category (bench/cpuprofile.ts),
// on a profile small enough to add up by hand.
import { describe, expect, it } from 'vitest';
import { summarise, type CallFrame, type CpuProfile } from '../../bench/cpuprofile.js';

const frame = (functionName: string, url: string): CallFrame => ({ functionName, url, lineNumber: 0, columnNumber: 0 });
const START = 1_000_000;

// root ─ (idle)
//      └ fastify reply.send ─ our handler ─ pg client.query ─ node:events emit ─ Socket._writev ─ writev
//                           └ _http_outgoing end ─ writev
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 3] },
    { id: 2, callFrame: frame('(idle)', '') },
    { id: 3, callFrame: frame('Reply.send', 'file:///app/node_modules/fastify/lib/reply.js'), children: [4, 9] },
    { id: 4, callFrame: frame('listPets', 'file:///app/dist/src/handlers/listPets.js'), children: [5] },
    { id: 5, callFrame: frame('query', 'file:///app/node_modules/pg/lib/client.js'), children: [6] },
    { id: 6, callFrame: frame('emit', 'node:events'), children: [7] },
    { id: 7, callFrame: frame('Socket._writev', 'node:net'), children: [8] },
    { id: 8, callFrame: frame('writev', '') },
    { id: 9, callFrame: frame('end', 'node:_http_outgoing'), children: [10] },
    { id: 10, callFrame: frame('writev', '') },
  ],
  startTime: START,
  endTime: START + 200,
  // Sample i lasts until sample i + 1: 10, 20, 30, 40, 50 µs, and the last one 0.
  samples: [2, 8, 10, 6, 4, 2],
  timeDeltas: [10, 10, 20, 30, 40, 50],
};

const PG = 'pg driver and protocol';
const HANDLERS = 'our handlers (handlers, cursors, contract binding)';
const FASTIFY = 'Fastify (routing, hooks, reply)';
const ANSWERS = 'Node HTTP: answers (headers, socket writes, kernel time included)';

describe('summarise', () => {
  const summary = summarise(profile);
  const at = (name: string) => summary.byCategory.get(name);

  it('gives each sample to the innermost frame with a category; frames without one (node:events) pass it on', () => {
    expect(at(HANDLERS)).toEqual({ self: 50, total: 110 });
    expect(at(FASTIFY)).toEqual({ self: 0, total: 140 });
    expect(at('idle')).toEqual({ self: 10, total: 10 });
  });

  it("counts a socket write under pg as pg's, and one under an HTTP answer as the answer's", () => {
    expect(at(PG)).toEqual({ self: 20 + 40, total: 20 + 40 });
    expect(at(ANSWERS)).toEqual({ self: 30, total: 20 + 30 });
  });

  it('adds up to the sampled time, by category and by function', () => {
    expect(summary.sampled).toBe(150);
    expect([...summary.byCategory.values()].reduce((sum, c) => sum + c.self, 0)).toBe(150);
    // The two writev frames are one function (same name, file and line).
    expect(summary.functionsOf.get(PG)).toEqual([
      ['emit node:events:1', 40],
      ['writev :1', 20],
    ]);
    expect(new Map(summary.byFunction)).toEqual(new Map([['listPets dist/src/handlers/listPets.js:1', 50], ['writev :1', 20 + 30], ['emit node:events:1', 40], ['(idle) :1', 10]]));
  });

  it('counts only the samples taken in the window', () => {
    const windowed = summarise(profile, { start: START + 15, end: START + 75 });
    expect(windowed.samples).toBe(3);
    expect(windowed.sampled).toBe(20 + 30 + 40);
    expect(windowed.byCategory.get('idle')?.self).toBe(0);
    expect(windowed.byCategory.get(HANDLERS)?.self).toBe(0);
  });
});
