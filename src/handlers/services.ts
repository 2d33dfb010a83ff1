import type { ApiKeysRepository } from '../db/api-keys.js';
import type { CategoriesRepository } from '../db/categories.js';
import type { EventsRepository } from '../db/events.js';
import type { InventoryRepository } from '../db/inventory.js';
import type { OrdersRepository } from '../db/orders.js';
import type { PetsRepository } from '../db/pets.js';
import type { WebhookDeliveriesRepository } from '../db/webhook-deliveries.js';
import type { WebhookEndpointsRepository } from '../db/webhook-endpoints.js';
import type { LazyCursorCodec } from '../pagination/cursor.js';
import type { UrlRefusal } from '../webhooks/target.js';

/** What handlers may use. Built once by the app and passed to every handler. */
export interface Services {
  pets: PetsRepository;
  orders: OrdersRepository;
  inventory: InventoryRepository;
  categories: CategoriesRepository;
  apiKeys: ApiKeysRepository;
  events: EventsRepository;
  cursors: LazyCursorCodec;
  /** How long a placed order holds its pet (ORDER_HOLD_SECONDS). */
  orderHoldSeconds: number;
  /** The most API keys in force createApiKey allows (API_KEY_LIMIT). */
  apiKeyLimit: number;
  /** How long events are kept (EVENT_RETENTION_DAYS), for the 410's message. */
  eventRetentionDays: number;
  webhookEndpoints: WebhookEndpointsRepository;
  webhookDeliveries: WebhookDeliveriesRepository;
  /** Whether a URL may be an endpoint's (src/webhooks/target.ts, with the deployment's resolver and WEBHOOK_ALLOW_PRIVATE). */
  webhookUrls: { check: (url: string) => Promise<UrlRefusal | undefined> };
}
