// The mixed traffic of `npm run bench` (bench/mix.ts): the same seed asks the same things of
// any server, whatever its cursors look like, in the shares the docs state.
import { describe, expect, it } from 'vitest';
import { buyMix, catalogueMix, categoryMix, connectionSeed, headerOf, nextLink, ordersMix, petsForSale, petsMix, renameMix, sortedMix, Walk, type Mix, type Seen, type Step } from '../../bench/mix.js';

const ROWS = 10_000;

/** `n` steps of a walk, each answered by `answer` (what a server would send back). */
function walk(seed: number, n: number, answer: (step: Step, i: number) => Seen, mix: Mix = petsMix): Step[] {
  const w = new Walk(mix, seed, ROWS, petsForSale(ROWS + 1, 1_000_000));
  const steps: Step[] = [];
  let seen: Seen | undefined;
  for (let i = 0; i < n; i++) {
    const step = w.next(seen);
    steps.push(step);
    seen = answer(step, i);
  }
  return steps;
}

// Two servers' answers to the same page: a signed cursor (ours) and a plain `after` (the reference).
const ours = (step: Step, i: number): Seen => (step.method === 'GET' && step.path.startsWith('/v1/pets?') ? { status: 200, next: `/v1/pets?limit=20&cursor=c${i}.sig` } : { status: step.method === 'POST' ? 201 : 200 });
const reference = (step: Step, i: number): Seen => (step.method === 'GET' && step.path.startsWith('/v1/pets?') ? { status: 200, next: `/v1/pets?limit=20&after=${i}` } : { status: step.method === 'POST' ? 201 : 200 });
const lastPageEverywhere = (step: Step): Seen => ({ status: step.method === 'POST' ? 201 : 200 });
/** `answer`, with a placed order's and a created pet's 201 naming it in `Location`, as both servers do. */
const placing =
  (answer: (step: Step, i: number) => Seen) =>
  (step: Step, i: number): Seen =>
    step.operation === 'placeOrder'
      ? { status: 201, location: `/v1/store/orders/${i + 1}` }
      : step.operation === 'createPet'
        ? { status: 201, location: `/v1/pets/${i + 1}` }
        : answer(step, i);

/** A step with the server's own next-page URL left out: what must be equal across servers. */
const logical = (step: Step): string => (step.operation === 'listPets next page' ? step.operation : `${step.method} ${step.path} ${step.body ?? ''}`);

describe('Walk', () => {
  it('asks the same of two servers whose cursors differ, and follows each server its own next page', () => {
    const a = walk(7, 2_000, ours);
    const b = walk(7, 2_000, reference);
    expect(a.map(logical)).toEqual(b.map(logical));
    const nextPages = a.flatMap((step, i) => (step.operation === 'listPets next page' ? [[step.path, b[i]?.path]] : []));
    expect(nextPages.length).toBeGreaterThan(100);
    for (const [pathA, pathB] of nextPages) {
      expect(pathA).toMatch(/^\/v1\/pets\?limit=20&cursor=c\d+\.sig$/);
      expect(pathB).toMatch(/^\/v1\/pets\?limit=20&after=\d+$/);
    }
  });

  it('draws the same numbers whether or not a server had a next page', () => {
    const always = walk(11, 3_000, ours).filter((s) => s.operation !== 'listPets next page');
    const never = walk(11, 3_000, lastPageEverywhere);
    expect(never.some((s) => s.operation === 'listPets next page')).toBe(false);
    // With no next page a browse is one request, so `never` covers more of the sequence.
    expect(never.slice(0, always.length).map(logical)).toEqual(always.map(logical));
  });

  it('gives each seed, and each connection of a run, a sequence of its own', () => {
    const first = (seed: number): string[] => walk(seed, 50, ours).map(logical);
    expect(first(connectionSeed(1, 0))).not.toEqual(first(connectionSeed(1, 1)));
    expect(first(connectionSeed(1, 0))).not.toEqual(first(connectionSeed(2, 0)));
    expect(first(connectionSeed(1, 0))).toEqual(first(connectionSeed(1, 0)));
  });

  it('browses with any status or none, limits 10 to 100, and follows 1 to 4 next pages', () => {
    const steps = walk(3, 20_000, ours);
    const firstPages = steps.filter((s) => s.operation === 'listPets first page');
    const limits = firstPages.map((s) => Number(new URLSearchParams(s.path.split('?')[1]).get('limit')));
    expect(Math.min(...limits)).toBe(10);
    expect(Math.max(...limits)).toBe(100);
    const statuses = new Set(firstPages.map((s) => new URLSearchParams(s.path.split('?')[1]).get('status')));
    expect(statuses).toEqual(new Set([null, 'available', 'pending', 'sold']));
    // Runs of next pages after each first page.
    const follows: number[] = [];
    for (const s of steps) {
      if (s.operation === 'listPets first page') follows.push(0);
      else if (s.operation === 'listPets next page') follows[follows.length - 1] = (follows[follows.length - 1] ?? 0) + 1;
    }
    follows.pop(); // the last browse may be cut off by the end of the walk
    expect(new Set(follows)).toEqual(new Set([1, 2, 3, 4]));
  });

  it('looks up seeded pets and creates valid ones', () => {
    const steps = walk(5, 20_000, ours);
    const ids = steps.filter((s) => s.operation === 'getPet').map((s) => Number(s.path.slice('/v1/pets/'.length)));
    expect(ids.every((id) => Number.isInteger(id) && id >= 1 && id <= ROWS)).toBe(true);
    for (const s of steps.filter((x) => x.operation === 'createPet')) {
      const pet = JSON.parse(s.body ?? '') as Record<string, unknown>;
      expect(Object.keys(pet).every((k) => ['name', 'categoryId', 'status'].includes(k))).toBe(true);
      expect(pet.name).toMatch(/^pet-\d+$/);
      expect(pet.categoryId).toBeGreaterThanOrEqual(1);
      expect(pet.categoryId).toBeLessThanOrEqual(50);
      expect([undefined, 'available', 'pending', 'sold']).toContain(pet.status);
    }
  });

  it('renames seeded pets at random with a merge patch of the name alone (updatePet)', () => {
    const steps = walk(13, 20_000, ours, renameMix);
    expect(new Set(steps.map((s) => `${s.operation} ${s.method}`))).toEqual(new Set(['updatePet PATCH']));
    const ids = steps.map((s) => Number(/^\/v1\/pets\/(\d+)$/.exec(s.path)?.[1]));
    expect(ids.every((id) => Number.isInteger(id) && id >= 1 && id <= ROWS)).toBe(true);
    // Spread over the seeded pets, not a few of them.
    expect(new Set(ids).size).toBeGreaterThan(8_000);
    for (const s of steps) expect(Object.keys(JSON.parse(s.body ?? '') as object)).toEqual(['name']);
    expect(steps.every((s) => /^\{"name":"pet-\d+ [A-Za-z ]+"\}$/.test(s.body ?? ''))).toBe(true);
  });

  it('lists the first page (limit 20) of each of the 50 seeded categories, at random (listPets with categoryId)', () => {
    const steps = walk(17, 5_000, ours, categoryMix);
    expect(steps.every((s) => s.method === 'GET' && s.operation === 'listPets categoryId' && s.body === undefined)).toBe(true);
    const categories = steps.map((s) => {
      const query = new URLSearchParams(s.path.split('?')[1]);
      expect(s.path.split('?')[0]).toBe('/v1/pets');
      expect(query.get('limit')).toBe('20');
      return Number(query.get('categoryId'));
    });
    expect(new Set(categories)).toEqual(new Set(Array.from({ length: 50 }, (_, i) => i + 1)));
  });

  it.each([petsMix, ordersMix, catalogueMix, buyMix, renameMix, categoryMix, sortedMix].map((mix) => [mix.name, mix] as const))('%s: sends the requests in the shares the docs state, within half a point', (_name, mix) => {
    const steps = walk(1, 200_000, placing(ours), mix);
    const counts = new Map<string, number>();
    for (const s of steps) counts.set(s.operation, (counts.get(s.operation) ?? 0) + 1);
    expect(new Set(counts.keys())).toEqual(new Set(Object.keys(mix.requests)));
    for (const [operation, percent] of Object.entries(mix.requests)) {
      expect(Math.abs((100 * (counts.get(operation) ?? 0)) / steps.length - percent)).toBeLessThan(0.5);
    }
    expect(mix.actions.reduce((sum, a) => sum + a.percent, 0)).toBe(100);
    expect(Object.values(mix.requests).reduce((sum, p) => sum + p, 0)).toBeCloseTo(100, 0);
  });

  it('buys: orders each pet for sale once, in turn, then completes or cancels the order its Location names', () => {
    const steps = walk(9, 4_000, placing(ours), buyMix);
    const placements = steps.filter((s) => s.operation === 'placeOrder');
    expect(placements.map((s) => (JSON.parse(s.body ?? '') as { petId: number }).petId)).toEqual(placements.map((_, i) => ROWS + 1 + i));
    const closes = steps.filter((s) => s.operation !== 'placeOrder');
    expect(closes.length).toBe(placements.length - (steps.at(-1)?.operation === 'placeOrder' ? 1 : 0));
    for (const s of closes) {
      expect(s.method).toBe('POST');
      expect(s.body).toBeUndefined();
      expect(s.path).toMatch(s.operation === 'completeOrder' ? /^\/v1\/store\/orders\/\d+\/complete$/ : /^\/v1\/store\/orders\/\d+\/cancel$/);
    }
    const completed = closes.filter((s) => s.operation === 'completeOrder').length;
    expect(Math.abs(completed / closes.length - 0.5)).toBeLessThan(0.05);
  });

  it('buys: a placement not answered 201 is not followed by a close, and the next buy takes the next pet', () => {
    const steps = walk(9, 100, (step) => (step.operation === 'placeOrder' ? { status: 409 } : { status: 200 }), buyMix);
    expect(steps.every((s) => s.operation === 'placeOrder')).toBe(true);
    expect(steps.map((s) => (JSON.parse(s.body ?? '') as { petId: number }).petId)).toEqual(steps.map((_, i) => ROWS + 1 + i));
  });

  it('runs out of pets for sale with a message that says what to raise', () => {
    const forSale = petsForSale(5, 2);
    expect([forSale(), forSale()]).toEqual([5, 6]);
    expect(() => forSale()).toThrow(/BENCH_SALE_PETS/);
  });
});

describe('headerOf', () => {
  const cases: [string, Record<string, string | string[] | undefined> | undefined, string | undefined][] = [
    ['lower case', { location: '/v1/store/orders/7' }, '/v1/store/orders/7'],
    ['any case', { Location: '/v1/store/orders/8' }, '/v1/store/orders/8'],
    ['repeated: the first', { location: ['/a', '/b'] }, '/a'],
    ['absent', { link: '</x>; rel="next"' }, undefined],
    ['no headers', undefined, undefined],
  ];
  it.each(cases)('%s', (_title, headers, want) => {
    expect(headerOf(headers, 'location')).toBe(want);
  });
});

describe('nextLink', () => {
  const cases: [string, Record<string, string | string[] | undefined> | undefined, string | undefined][] = [
    ['ours', { Link: '</v1/pets?limit=20&cursor=eyJhIjoyMH0.Qk5u>; rel="next"' }, '/v1/pets?limit=20&cursor=eyJhIjoyMH0.Qk5u'],
    ['the reference (lower-case name)', { link: '</v1/pets?limit=10&status=sold&after=42>; rel="next"' }, '/v1/pets?limit=10&status=sold&after=42'],
    ['among other links in one header', { link: '</v1/pets>; rel="successor-version", </v1/pets?after=3>; rel=next' }, '/v1/pets?after=3'],
    ['in a second Link header', { link: ['</v1/pets>; rel="successor-version"', '</v1/pets?after=4>; rel="next"'] }, '/v1/pets?after=4'],
    ['only another relation', { link: '</v1/pets>; rel="successor-version"' }, undefined],
    ['a relation that merely starts with next', { link: '</v1/x>; rel="nextish"' }, undefined],
    ['no Link header', { 'content-type': 'application/json' }, undefined],
    ['no headers', undefined, undefined],
  ];
  it.each(cases)('%s', (_title, headers, want) => {
    expect(nextLink(headers)).toBe(want);
  });
});
