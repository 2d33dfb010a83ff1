// Mixed traffic for `npm run bench`. With every connection asking the same URL,
// identical reads coalesce into one query and the bench measures a traffic nobody sends.
// Here each connection is a user on an errand chosen at random, seeded: the same seed gives
// the same sequence of requests on any server, so two servers measured with one seed were
// asked the same things (the cursors in their `Link` headers differ; the pages they name do
// not).
//
// A mix is a list of actions with their shares; an action is a generator that yields its
// requests one at a time and is handed what was seen of each answer (its status and the
// target of `Link: <...>; rel="next"`). An action draws every random number it needs before
// its first request, so what a server answers (its cursor, a missing next page) never
// changes the random numbers of the actions that follow. A mix is a list of actions:
// `petsMix` (browse, look up, create), `ordersMix` (the same beside buying: place an order,
// then complete or cancel it) and `buyMix` (buying alone: placeOrder and what follows it);
// `renameMix` (updatePet alone: a seeded pet renamed) and `categoryMix` (listPets with the
// categoryId filter alone) measure one operation each over random ids, as the fixed URLs of
// bench/harness.ts cannot: a fixed URL would rename one pet, or list one category, forever.

/** A uniform random number in [0, 1). */
export type Rng = () => number;

/** One request of an action. `operation` names it in the counts ('listPets next', ...). */
export interface Step {
  operation: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: string;
}

/** What an action sees of an answer: its status, the URL of the next page and the `Location` of what it created, if any. */
export interface Seen {
  status: number;
  next?: string;
  location?: string;
}

/** What an action draws from: the connection's random numbers and the seeded catalogue's size. */
export interface ActionContext {
  rng: Rng;
  /** Pets 1..rows exist in every server's catalogue. */
  rows: number;
  /**
   * The next pet for sale: an available pet no other connection of the run has ordered
   * (bench/harness.ts hands them out from a range seeded for the purpose, and makes them
   * available again between runs). Drawn when a buy starts, so it is not a random number.
   */
  forSale: () => number;
}

/** An action: yields each request and receives what was seen of its answer (undefined if none came). */
export type Action = (context: ActionContext) => Generator<Step, void, Seen | undefined>;

export interface Mix {
  name: string;
  /** Shares in percent of actions (not of requests: a browse is several requests); they add up to 100. */
  actions: { name: string; percent: number; run: Action }[];
  /** The resulting shares in percent of requests, as stated in the docs (the test checks them against a long walk). */
  requests: Record<string, number>;
}

/** mulberry32: a small, fast, seeded generator; plenty for choosing requests. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A connection's seed from the run's seed and the connection's number (FNV-1a over both). */
export function connectionSeed(runSeed: number, connection: number): number {
  let h = 0x811c9dc5;
  for (const n of [runSeed, connection]) {
    for (let i = 0; i < 4; i++) {
      h ^= (n >>> (8 * i)) & 0xff;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  return h;
}

/** An integer in lo..hi, both included. */
export const between = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));
export const oneOf = <T>(rng: Rng, values: readonly T[]): T => values[Math.floor(rng() * values.length)] as T;

/** The target of `Link: <...>; rel="next"` among the headers of an answer (any case of the name, one or several Link headers). */
export function nextLink(headers: Record<string, string | string[] | undefined> | undefined): string | undefined {
  if (!headers) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'link' || value === undefined) continue;
    for (const link of Array.isArray(value) ? value : value.split(/,(?=\s*<)/)) {
      const match = /^\s*<([^>]*)>(.*)$/.exec(link);
      if (match && /;\s*rel="?next"?(\s|;|$)/i.test(match[2] as string)) return match[1];
    }
  }
  return undefined;
}

/** A header's value among an answer's headers, whatever the case of its name (the first, if repeated). */
export function headerOf(headers: Record<string, string | string[] | undefined> | undefined, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  return undefined;
}

const STATUSES = [undefined, 'available', 'pending', 'sold'] as const;

/**
 * Browse: a first page with any status filter or none (a quarter each) and any limit from
 * 10 to 100, then 1 to 4 more pages by following `rel="next"` (fewer if there is none).
 */
export const browsePets: Action = function* ({ rng }) {
  const status = oneOf(rng, STATUSES);
  const limit = between(rng, 10, 100);
  const follow = between(rng, 1, 4);
  let seen = yield { operation: 'listPets first page', method: 'GET', path: `/v1/pets?limit=${limit}${status ? `&status=${status}` : ''}` };
  for (let page = 0; page < follow && seen?.next; page++) {
    seen = yield { operation: 'listPets next page', method: 'GET', path: seen.next };
  }
};

/** Look up a pet at random among the seeded ones (getPet). */
export const lookUpPet: Action = function* ({ rng, rows }) {
  yield { operation: 'getPet', method: 'GET', path: `/v1/pets/${between(rng, 1, rows)}` };
};

/** Create a pet: a name, one of 50 categories, any status or none. */
export const createPet: Action = function* ({ rng }) {
  const status = oneOf(rng, STATUSES);
  const pet = { name: `pet-${between(rng, 1, 1_000_000)}`, categoryId: between(rng, 1, 50), ...(status ? { status } : {}) };
  yield { operation: 'createPet', method: 'POST', path: '/v1/pets', body: JSON.stringify(pet) };
};

/**
 * Pets: of the actions, 30% browse, 50% look up, 20% create. A browse is 3.5 requests on
 * average (a first page and 1-4 next pages; every filter has more than 5 pages of 100), so
 * of the requests: 60% list pages (17.1% first pages, 42.9% next pages), 28.6% getPet,
 * 11.4% createPet.
 */
export const petsMix: Mix = {
  name: 'mixed: pets',
  actions: [
    { name: 'browse', percent: 30, run: browsePets },
    { name: 'look up', percent: 50, run: lookUpPet },
    { name: 'create', percent: 20, run: createPet },
  ],
  requests: { 'listPets first page': 17.1, 'listPets next page': 42.9, getPet: 28.6, createPet: 11.4 },
};

/**
 * Buy: place an order for the next pet for sale, then complete it or cancel it (half each),
 * on the order the `Location` of the 201 names. Stops if the placement was not answered 201.
 */
export const buyPet: Action = function* ({ rng, forSale }) {
  const close = rng() < 0.5 ? 'complete' : 'cancel';
  const petId = forSale();
  const placed = yield { operation: 'placeOrder', method: 'POST', path: '/v1/store/orders', body: JSON.stringify({ petId }) };
  if (placed?.status !== 201 || !placed.location) return;
  yield { operation: close === 'complete' ? 'completeOrder' : 'cancelOrder', method: 'POST', path: `${placed.location}/${close}` };
};

/**
 * Orders beside pets: of the actions, 30% browse, 40% look up, 20% buy, 10% create. A
 * browse is 3.5 requests on average and a buy 2, so of 195 requests per 100 actions: 53.8%
 * list pages (15.4% first pages, 38.5% next pages), 20.5% getPet, 10.3% placeOrder, 5.1%
 * each completeOrder, cancelOrder and createPet.
 */
export const ordersMix: Mix = {
  name: 'mixed: pets and orders',
  actions: [
    { name: 'browse', percent: 30, run: browsePets },
    { name: 'look up', percent: 40, run: lookUpPet },
    { name: 'buy', percent: 20, run: buyPet },
    { name: 'create', percent: 10, run: createPet },
  ],
  requests: { 'listPets first page': 15.4, 'listPets next page': 38.5, getPet: 20.5, placeOrder: 10.3, completeOrder: 5.1, cancelOrder: 5.1, createPet: 5.1 },
};

/** Buying alone: placeOrder, then completeOrder or cancelOrder on it. */
export const buyMix: Mix = {
  name: 'POST /v1/store/orders, then complete or cancel',
  actions: [{ name: 'buy', percent: 100, run: buyPet }],
  requests: { placeOrder: 50, completeOrder: 25, cancelOrder: 25 },
};

/**
 * Rename a pet at random among the seeded ones (updatePet): a merge patch of the name alone,
 * `{"name":"pet-<n>"}`, sent as `application/json` (which updatePet reads as a merge patch),
 * without If-Match. The seeded pets have no order, so no rename meets 409.
 */
/** The breeds of the seeded names (bench/harness.ts), which searchMix looks for. */
export const BREEDS = ['Labrador', 'Labradoodle', 'Golden Retriever', 'Poodle', 'Beagle', 'Boxer', 'Husky', 'Collie', 'Pug', 'Corgi'] as const;

export const renamePet: Action = function* ({ rng, rows }) {
  const id = between(rng, 1, rows);
  // A new number and a breed: renamed pets stay as searchable as the seeded ones.
  const name = `pet-${between(rng, 1, 1_000_000)} ${oneOf(rng, BREEDS)}`;
  yield { operation: 'updatePet', method: 'PATCH', path: `/v1/pets/${id}`, body: JSON.stringify({ name }) };
};

/** Add a pet, then remove it (createPet, then deletePet on the `Location` of its 201). */
export const addThenRemove: Action = function* ({ rng }) {
  const pet = { name: `pet-${between(rng, 1, 1_000_000)}`, categoryId: between(rng, 1, 50), status: 'available' };
  const added = yield { operation: 'createPet', method: 'POST', path: '/v1/pets', body: JSON.stringify(pet) };
  if (added?.status !== 201 || !added.location) return;
  yield { operation: 'deletePet', method: 'DELETE', path: added.location };
};

/**
 * The catalogue's staff beside its customers: of the actions, 30% browse, 30% look up, 20%
 * rename a pet, 10% add a pet and remove it, 10% create. A browse is 3.5 requests on average
 * and an add-and-remove 2, so of 185 requests per 100 actions: 56.8% list pages (16.2% first
 * pages, 40.5% next pages), 16.2% getPet, 10.8% updatePet, 10.8% createPet, 5.4% deletePet.
 */
export const catalogueMix: Mix = {
  name: 'mixed: catalogue',
  actions: [
    { name: 'browse', percent: 30, run: browsePets },
    { name: 'look up', percent: 30, run: lookUpPet },
    { name: 'rename', percent: 20, run: renamePet },
    { name: 'add and remove', percent: 10, run: addThenRemove },
    { name: 'create', percent: 10, run: createPet },
  ],
  requests: { 'listPets first page': 16.2, 'listPets next page': 40.5, getPet: 16.2, updatePet: 10.8, createPet: 10.8, deletePet: 5.4 },
};

/** The first page (limit 20) of one of the 50 categories the harness seeds (listPets with categoryId). */
export const listCategory: Action = function* ({ rng }) {
  yield { operation: 'listPets categoryId', method: 'GET', path: `/v1/pets?limit=20&categoryId=${between(rng, 1, 50)}` };
};

/** updatePet alone: a seeded pet renamed, at random. */
export const renameMix: Mix = {
  name: 'PATCH /v1/pets/{id} (random ids, a new name)',
  actions: [{ name: 'rename', percent: 100, run: renamePet }],
  requests: { updatePet: 100 },
};

/** listPets with the categoryId filter alone: a first page of 20 of a random category. */
export const categoryMix: Mix = {
  name: 'GET /v1/pets?limit=20&categoryId={1..50} (random categories)',
  actions: [{ name: 'list a category', percent: 100, run: listCategory }],
  requests: { 'listPets categoryId': 100 },
};

const ORDERS = ['name', 'name desc', 'createdAt desc', 'updatedAt desc'] as const;

/** Browse in an order (listPets with orderBy): a first page of 20 in one of four orders, then 1 to 4 more by `rel="next"`. */
export const browseSorted: Action = function* ({ rng }) {
  const order = oneOf(rng, ORDERS);
  const follow = between(rng, 1, 4);
  let seen = yield { operation: 'listPets orderBy first page', method: 'GET', path: `/v1/pets?limit=20&orderBy=${encodeURIComponent(order)}` };
  for (let page = 0; page < follow && seen?.next; page++) seen = yield { operation: 'listPets orderBy next page', method: 'GET', path: seen.next };
};

/** listPets in an order alone: of 350 requests per 100 browses, 100 first pages and 250 next pages. */
export const sortedMix: Mix = {
  name: 'GET /v1/pets?limit=20&orderBy={name,name desc,createdAt desc,updatedAt desc} (then next pages)',
  actions: [{ name: 'browse in an order', percent: 100, run: browseSorted }],
  requests: { 'listPets orderBy first page': 28.6, 'listPets orderBy next page': 71.4 },
};

// Words of the seeded names (bench/harness.ts: `pet-<i> <breed>`): whole, begun, and one letter off.
const SEARCHES = ['labrador', 'poodle', 'lab', 'retr', 'labrdor', 'beagl'] as const;

/** Search (listPets with q, by relevance): a first page of 20 for one of six words, then 1 or 2 more by `rel="next"`. */
export const searchPets: Action = function* ({ rng }) {
  const q = oneOf(rng, SEARCHES);
  const follow = between(rng, 1, 2);
  let seen = yield { operation: 'listPets q first page', method: 'GET', path: `/v1/pets?limit=20&q=${q}` };
  for (let page = 0; page < follow && seen?.next; page++) seen = yield { operation: 'listPets q next page', method: 'GET', path: seen.next };
};

/** listPets with q alone: of 250 requests per 100 searches, 100 first pages and 150 next pages. */
export const searchMix: Mix = {
  name: 'GET /v1/pets?limit=20&q={labrador,poodle,lab,retr,labrdor,beagl} (then next pages)',
  actions: [{ name: 'search', percent: 100, run: searchPets }],
  requests: { 'listPets q first page': 40, 'listPets q next page': 60 },
};

/** Pets for sale handed out in order from `first`, `count` of them; throws when they run out. */
export function petsForSale(first: number, count: number): () => number {
  let next = first;
  return () => {
    if (next >= first + count) throw new Error(`the ${count} pets for sale ran out in one run: raise BENCH_SALE_PETS`);
    return next++;
  };
}

/** One connection's walk through a mix: the next request, given what was seen of the last answer. */
export class Walk {
  private readonly context: ActionContext;
  private current: Generator<Step, void, Seen | undefined> | undefined;

  constructor(
    private readonly mix: Mix,
    seed: number,
    rows: number,
    forSale: () => number = () => {
      throw new Error(`${mix.name}: no pets for sale were given to this walk`);
    },
  ) {
    this.context = { rng: mulberry32(seed), rows, forSale };
  }

  next(seen?: Seen): Step {
    const step = this.current?.next(seen);
    if (step && !step.done) return step.value;
    for (;;) {
      this.current = this.choose().run(this.context);
      const first = this.current.next();
      if (!first.done) return first.value;
    }
  }

  private choose(): Mix['actions'][number] {
    let x = this.context.rng() * 100;
    for (const action of this.mix.actions) {
      x -= action.percent;
      if (x < 0) return action;
    }
    return this.mix.actions[this.mix.actions.length - 1] as Mix['actions'][number];
  }
}
