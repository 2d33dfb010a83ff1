// Type-level test of the generated webhook payloads (generated/webhooks.ts, from the
// contract's top-level `webhooks`), checked by `npm run typecheck`: the table has one payload
// per value of the EventType enum and no other, WEBHOOK_EVENT_TYPES lists the same, each
// payload's `type` is its own key and its `data` the resource the event is about. A webhook
// added without its enum value (or the reverse) fails the build here.
import type { components } from '../../generated/v1.js';
import type { WEBHOOK_EVENT_TYPES, WebhookEvent, WebhookEventType, WebhookPayloads } from '../../generated/webhooks.js';
import type { WebhookPayloads as ClientWebhookPayloads } from '../../client/src/generated/webhooks.js';

type EventType = components['schemas']['EventType'];
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const holds = <T extends true>(): T => true as T;

// Every EventType value has a webhook, and every webhook is an EventType value.
export const sameKeys = holds<Equal<keyof WebhookPayloads, EventType>>();
export const sameList = holds<Equal<(typeof WEBHOOK_EVENT_TYPES)[number], EventType>>();
export const sameAlias = holds<Equal<WebhookEventType, EventType>>();
export const clientSame = holds<Equal<keyof ClientWebhookPayloads, EventType>>();

// Each payload's type is its key.
export const ownType = holds<Equal<{ [T in keyof WebhookPayloads]: WebhookPayloads[T]['type'] }, { [T in EventType]: T }>>();
// Its data is the resource: a Pet, an Order or a Category.
export const petData = holds<Equal<WebhookPayloads['pet.deleted']['data'], components['schemas']['Pet']>>();
export const orderData = holds<Equal<WebhookPayloads['order.expired']['data'], components['schemas']['Order']>>();
export const categoryData = holds<Equal<WebhookPayloads['category.updated']['data'], components['schemas']['Category']>>();
// Every payload is an Event of the contract.
export const anEvent = holds<WebhookEvent extends components['schemas']['Event'] ? true : false>();

// `type` narrows the union.
export function dataOf(event: WebhookEvent): number {
  switch (event.type) {
    case 'order.completed':
      return event.data.petId;
    case 'category.deleted':
      return event.data.id;
    default:
      // @ts-expect-error a pet event's data has no petId
      return event.type === 'pet.created' ? event.data.petId : 0;
  }
}

// @ts-expect-error not an event type of the contract
export const unknown: WebhookPayloads['pet.sold'] = undefined as never;
// @ts-expect-error a listed type's payload with another type is refused
export const mislabelled: WebhookPayloads['pet.created'] = { id: 1, type: 'pet.updated', createdAt: '2026-11-26T10:00:00.000Z', data: { id: 1, name: 'Rex', categoryId: 2 } };
