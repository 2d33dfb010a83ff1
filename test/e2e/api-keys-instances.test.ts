// Two service processes on one database: a key revoked through one, a key's expiry and the
// end of a rotation's grace take effect on both (contract 1.3.0: revokeApiKey,
// rotateApiKey). Revocation and rotation travel by NOTIFY; expiry and the end of a grace are
// judged by each instance's clock at every request. Each measured delay is printed.
import { describe, expect, it } from 'vitest';
import { contractViolations } from '../contract.js';
import { within, type ServerProcess } from '../process.js';
import { useInstances } from '../support/instances.js';

// Waits are for a condition, with one generous limit: the delays are printed, not judged.
const LIMIT_MS = 60_000;

const instances = useInstances(2, 'admin');

/** One request over a real socket, checked against the contract. */
async function call(server: ServerProcess, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: () => any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(contractViolations(method, path, { statusCode: response.status, headers: Object.fromEntries(response.headers), body: text }), `${method} ${path}`).toEqual([]);
  return { status: response.status, json: () => JSON.parse(text) };
}

const status = async (server: ServerProcess, key: string) => (await call(server, 'GET', '/v1/pets?limit=1', key)).status;
const acceptedByBoth = (key: string) => Promise.all(instances.servers.map((s) => within(LIMIT_MS, async () => (await status(s, key)) === 200)));

/**
 * Polls `key` on every instance from now on: per instance, when the last request it
 * accepted was sent (it was judged after that) and when its first refusal arrived (it was
 * judged before that), in ms since the epoch.
 */
async function watch(key: string, untilMs: number): Promise<{ lastAccepted: number; refusedAt: number }[]> {
  return Promise.all(
    instances.servers.map(async (server) => {
      let lastAccepted = 0;
      let refusedAt = 0;
      await within(untilMs, async () => {
        const sent = Date.now();
        const answer = await status(server, key);
        if (answer === 200) lastAccepted = sent;
        else refusedAt = Date.now();
        return answer === 401;
      });
      return { lastAccepted, refusedAt };
    }),
  );
}

describe('two instances: a key stops working on both', () => {
  it('revoked through one instance', async () => {
    const [a] = instances.servers as [ServerProcess, ServerProcess];
    const key = (await call(a, 'POST', '/v1/api-keys', instances.key, { name: 'revoked', scopes: ['pets:read'] })).json();
    await acceptedByBoth(key.secret);
    const revoked = await call(a, 'POST', `/v1/api-keys/${key.id}/revoke`, instances.key);
    expect(revoked.status).toBe(200);
    const answered = Date.now();
    const seen = await watch(key.secret, LIMIT_MS);
    const delays = seen.map((s) => s.refusedAt - answered);
    console.log(`revocation: refused ${delays.map((d) => `${d} ms`).join(' and ')} after the revoke's answer, by instance`);
  });

  it('at its expiresAt', async () => {
    const [a] = instances.servers as [ServerProcess, ServerProcess];
    const expiresAt = Date.now() + 8000;
    const key = (await call(a, 'POST', '/v1/api-keys', instances.key, { name: 'expiring', scopes: ['pets:read'], expiresAt: new Date(expiresAt).toISOString() })).json();
    await acceptedByBoth(key.secret);
    const seen = await watch(key.secret, LIMIT_MS);
    const delays = seen.map((s) => s.refusedAt - expiresAt);
    console.log(`expiry: refused ${delays.map((d) => `${d} ms`).join(' and ')} after expiresAt; last accepted ${seen.map((s) => `${expiresAt - s.lastAccepted} ms`).join(' and ')} before it`);
    for (const [i, s] of seen.entries()) {
      expect(s.lastAccepted, `instance ${i} accepted it before expiresAt`).toBeGreaterThan(0);
      expect(s.lastAccepted).toBeLessThan(expiresAt);
    }
  });

  it("at the end of a rotation's grace; the new secret keeps working", async () => {
    const [a, b] = instances.servers as [ServerProcess, ServerProcess];
    const key = (await call(a, 'POST', '/v1/api-keys', instances.key, { name: 'rotated', scopes: ['pets:read'] })).json();
    await acceptedByBoth(key.secret);
    // A key rotates its own secret.
    const rotated = await call(b, 'POST', `/v1/api-keys/${key.id}/rotate`, key.secret, { graceSeconds: 8 });
    expect(rotated.status).toBe(200);
    const graceEnds = Date.parse(rotated.json().previousSecretExpiresAt);
    await acceptedByBoth(rotated.json().secret);
    const seen = await watch(key.secret, LIMIT_MS);
    const delays = seen.map((s) => s.refusedAt - graceEnds);
    console.log(`grace: the previous secret refused ${delays.map((d) => `${d} ms`).join(' and ')} after its grace ended; last accepted ${seen.map((s) => `${graceEnds - s.lastAccepted} ms`).join(' and ')} before`);
    for (const [i, s] of seen.entries()) {
      expect(s.lastAccepted, `instance ${i} accepted it during the grace`).toBeGreaterThan(0);
      expect(s.lastAccepted).toBeLessThan(graceEnds);
    }
    for (const server of instances.servers) expect(await status(server, rotated.json().secret)).toBe(200);
  });

  it('rotated with no grace: the previous secret is refused by both', async () => {
    const [a, b] = instances.servers as [ServerProcess, ServerProcess];
    const key = (await call(a, 'POST', '/v1/api-keys', instances.key, { name: 'rotated now', scopes: ['pets:read'] })).json();
    await acceptedByBoth(key.secret);
    const rotated = await call(b, 'POST', `/v1/api-keys/${key.id}/rotate`, key.secret, { graceSeconds: 0 });
    expect(rotated.status).toBe(200);
    const answered = Date.now();
    const seen = await watch(key.secret, LIMIT_MS);
    const delays = seen.map((s) => s.refusedAt - answered);
    console.log(`rotation without grace: refused ${delays.map((d) => `${d} ms`).join(' and ')} after the answer`);
  });
});

describe('two instances: rotations at once with one secret', () => {
  // Each rotation is judged against the row as it stands: only the current secret rotates,
  // so of rotations sent together with one secret, through both instances, one is 200 and
  // the others find that secret replaced (403). Before, each could answer 200 with a secret
  // of its own, the caller's own secret was refused at once, and most secrets answered never
  // worked.
  it.each([2, 6])('%i rotations: one 200, the others 403 forbidden; its new secret works, and the one sent keeps its grace', async (count) => {
    const key = (await call(instances.servers[0] as ServerProcess, 'POST', '/v1/api-keys', instances.key, { name: `raced ${count}`, scopes: ['pets:read'] })).json();
    await acceptedByBoth(key.secret);
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) => call(instances.servers[i % 2] as ServerProcess, 'POST', `/v1/api-keys/${key.id}/rotate`, key.secret, { graceSeconds: 3600 })),
    );
    const won = answers.filter((a) => a.status === 200);
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array.from({ length: count - 1 }, () => 403)]);
    for (const lost of answers.filter((a) => a.status === 403)) {
      expect(lost.json()).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/is no longer the current secret|previous secret/) });
    }
    await acceptedByBoth(won[0]?.json().secret);
    for (const server of instances.servers) expect(await status(server, key.secret), 'the secret sent, in its grace').toBe(200);
  });
});
