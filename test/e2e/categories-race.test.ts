// Category names are unique ignoring case, also between service processes: two service
// processes on one database, requests sent at the same moment to both, over real sockets,
// judged by what the clients were answered (and what the database holds afterwards), never
// by timing.
// - Two ids given one name at once (new ids, or named ids renamed): exactly one 2xx and one
//   409 naming the winner, never a 5xx; the loser is unchanged.
// - One new id given one name (in different cases) by many requests at once: every answer
//   2xx, exactly one 201, never a 409 naming the id itself nor a 5xx (both requests can
//   pass ON CONFLICT's check of the id before either inserts: src/catalogue/categories.ts). That
//   window is narrow: it opens in a few rounds of a hundred, hence the many rounds.
import { describe, expect, it } from 'vitest';
import type { ServerProcess } from '../process.js';
import { useInstances } from '../support/instances.js';

const INSTANCES = 2;
const ROUNDS = 100;
const SAME_ID_ROUNDS = 200;

const cluster = useInstances(INSTANCES, 'categories');

interface Answer {
  status: number;
  body: { id?: number; name?: string; code?: string; message?: string; status?: number };
}

/** PUT /v1/categories/{id} with this name, on instance `n`, as a client sends it. */
async function putOn(n: number, id: number, name: string): Promise<Answer> {
  const server = cluster.servers[n % cluster.servers.length] as ServerProcess;
  const response = await fetch(`${server.url}/v1/categories/${id}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${cluster.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const storedName = async (id: number) => (await cluster.db.query<{ name: string }>('SELECT name FROM categories WHERE id = $1', [id])).rows[0]?.name;
const holdersOf = async (name: string) => (await cluster.db.query<{ id: string }>('SELECT id FROM categories WHERE lower(name) = lower($1)', [name])).rows.map((r) => Number(r.id));

describe('two instances on one database', () => {
  it.each([
    ['two new ids', { named: false, won: 201 }],
    ['two named ids renamed', { named: true, won: 200 }],
  ])(`%s given one name at the same moment, on different instances, ${ROUNDS} rounds: each round exactly one 2xx and one 409`, async (_title, { named, won }) => {
    const base = named ? 20_000 : 10_000;
    for (let round = 0; round < ROUNDS; round++) {
      const [a, b] = [base + 2 * round, base + 2 * round + 1];
      if (named) for (const id of [a, b]) expect((await putOn(id, id, `Before ${id}`)).status).toBe(201);
      // The same name in two cases: unique ignoring case.
      const name = `Contested ${base} ${round}`;
      const sent = [name, name.toUpperCase()];
      const answers = await Promise.all([putOn(round, a, sent[0] as string), putOn(round + 1, b, sent[1] as string)]);
      expect(answers.map((x) => x.status).sort(), JSON.stringify(answers)).toEqual([won, 409].sort());
      const winner = answers.findIndex((x) => x.status === won);
      const [winnerId, loserId] = winner === 0 ? [a, b] : [b, a];
      const winnerName = sent[winner] as string;
      expect(answers[winner]?.body).toEqual({ id: winnerId, name: winnerName });
      expect(answers[1 - winner]?.body).toEqual({
        code: 'category_name_taken',
        message: `Category ${winnerId} is already named "${winnerName}" (names are unique ignoring case): choose another name, or rename or remove category ${winnerId} first`,
        status: 409,
      });
      // The database agrees: one holder, the winner; the loser is as it was.
      expect(await holdersOf(name)).toEqual([winnerId]);
      expect(await storedName(winnerId)).toBe(winnerName);
      expect(await storedName(loserId)).toBe(named ? `Before ${loserId}` : undefined);
    }
  });

  it(`one new id given one name by 10 requests at once on both instances, ${SAME_ID_ROUNDS} rounds: all 2xx, exactly one 201`, async () => {
    for (let round = 0; round < SAME_ID_ROUNDS; round++) {
      const id = 30_000 + round;
      const name = `Shared ${round}`;
      // Half send it in capitals: a case variant of the id's own name is a rename (200).
      const sent = Array.from({ length: 10 }, (_, n) => (n % 2 === 0 ? name : name.toUpperCase()));
      const answers = await Promise.all(sent.map((given, n) => putOn(n, id, given)));
      expect(answers.filter((x) => x.status === 201), JSON.stringify(answers)).toHaveLength(1);
      expect(answers.filter((x) => x.status !== 201).map((x) => x.status)).toEqual(Array(9).fill(200));
      answers.forEach((x, n) => expect(x.body).toEqual({ id, name: sent[n] }));
      // The last put wins: the name stored is one that was sent, and only this id holds it.
      expect(sent).toContain(await storedName(id));
      expect(await holdersOf(name)).toEqual([id]);
    }
  });
});
