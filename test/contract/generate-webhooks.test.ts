// The generator's table of webhook payloads (generated/webhooks.ts, and the client's copy):
// the event types in the contract's order, and generation refused when a webhook's body
// names no event schema. The contract is copied, changed and given to
// `scripts/generate.ts --check --spec=<copy>`, which writes nothing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { WEBHOOK_EVENT_SCHEMAS, WEBHOOK_EVENT_TYPES } from '../../generated/webhooks.js';
import { WEBHOOK_EVENT_TYPES as CLIENT_EVENT_TYPES } from '../../client/src/generated/webhooks.js';
import { root, runTs } from '../process.js';

type Spec = { webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: unknown } } } } }>; components: { schemas: Record<string, { enum?: string[] }> } };
const source = readFileSync(path.join(root, 'openapi/v1.yaml'), 'utf8');
const folder = mkdtempSync(path.join(tmpdir(), 'animal-store-generate-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Runs the generator's check over the contract as `change` leaves it. */
async function generateFrom(change: (spec: Spec) => void) {
  const spec = parse(source) as Spec;
  change(spec);
  const file = path.join(folder, `v1-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify(spec));
  return runTs('scripts/generate.ts', ['--check', `--spec=${file}`], {});
}

const bodyOf = (spec: Spec, type: string) => spec.webhooks[type]?.post.requestBody.content['application/json'] as { schema: unknown };

describe('the webhook payload table', () => {
  it("lists the keys of the contract's webhooks in its order, each with the event schema its body names", () => {
    const spec = parse(source) as Spec;
    expect([...WEBHOOK_EVENT_TYPES]).toEqual(Object.keys(spec.webhooks));
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual([...(spec.components.schemas.EventType?.enum ?? [])].sort());
    expect(CLIENT_EVENT_TYPES).toEqual(WEBHOOK_EVENT_TYPES);
    expect(WEBHOOK_EVENT_SCHEMAS['order.expired']).toBe('OrderEvent');
    expect(WEBHOOK_EVENT_SCHEMAS['category.deleted']).toBe('CategoryEvent');
  });

  it('the committed files are those the contract generates (--spec= names it explicitly)', async () => {
    const result = await runTs('scripts/generate.ts', ['--check', `--spec=${path.join(root, 'openapi/v1.yaml')}`], {});
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);

  it('--spec= without --check is refused: the committed files come from openapi/v1.yaml only', async () => {
    const result = await runTs('scripts/generate.ts', [`--spec=${path.join(folder, 'elsewhere.yaml')}`], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--spec= is for --check only/);
  }, 60_000);

  it.each([
    ['names a schema that is no event (Pet)', (spec: Spec) => void (bodyOf(spec, 'pet.created').schema = { $ref: '#/components/schemas/Pet' }), /webhooks pet\.created requestBody schema -> #\/components\/schemas\/Pet: names no event schema/],
    ['names no schema at all', (spec: Spec) => void (bodyOf(spec, 'order.placed').schema = { type: 'object' }), /webhooks order\.placed requestBody schema: does not name an event schema/],
    ['narrows type to another event type', (spec: Spec) => void (bodyOf(spec, 'order.expired').schema = { allOf: [{ $ref: '#/components/schemas/OrderEvent' }, { type: 'object', properties: { type: { const: 'order.placed' } } }] }), /const "order\.placed", not the webhook's key order\.expired/],
    ['names an event schema whose types do not include it', (spec: Spec) => void (bodyOf(spec, 'category.updated').schema = { allOf: [{ $ref: '#/components/schemas/PetEvent' }, { type: 'object', properties: { type: { const: 'category.updated' } } }] }), /does not list category\.updated/],
    ['names an event schema of several types without narrowing it', (spec: Spec) => void (bodyOf(spec, 'pet.deleted').schema = { $ref: '#/components/schemas/PetEvent' }), /PetEvent has several types; narrow it to pet\.deleted/],
  ])('refuses a webhook whose body %s (exit 2, naming where)', async (_title, change, message) => {
    const result = await generateFrom(change);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  }, 60_000);
});
