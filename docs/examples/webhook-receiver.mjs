// A webhook receiver for the Animal Store API: a Node HTTP server that verifies each
// delivery's Standard Webhooks signature with the `standardwebhooks` library, answers 204 to
// a verified delivery and 400 to anything else, and skips a delivery it has already
// processed (by `webhook-id`: deliveries are at least once).
//
//   npm install standardwebhooks@1.1.1
//   WEBHOOK_SECRET=whsec_... PORT=8080 node webhook-receiver.mjs
//
// WEBHOOK_SECRET is the `secret` createWebhookEndpoint answered. While a secret is being
// rotated, the service signs every delivery with both the new and the previous secret, so
// this receiver keeps verifying with the old one until you deploy the new one.
// test/e2e/webhook-receiver-example.test.ts runs this very file.
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith('whsec_')) {
  console.error('Set WEBHOOK_SECRET to the whsec_... secret that createWebhookEndpoint answered.');
  process.exit(1);
}
const webhook = new Webhook(secret);
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8080);

// The ids already processed. A real receiver keeps them where its work is stored (a unique
// column, in the same transaction as the work), so that a restart does not forget them.
const processed = new Set();

/** What to do with a verified event; replace it with your own. */
async function handle(event) {
  console.log(JSON.stringify({ received: event.id, type: event.type }));
}

const server = createServer(async (request, response) => {
  if (request.method !== 'POST') return response.writeHead(405, { allow: 'POST' }).end();
  // The body exactly as it came: the signature covers these bytes, not a re-serialized object.
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > 1024 * 1024) return response.writeHead(413).end();
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks).toString('utf8');
  let event;
  try {
    // Checks webhook-id, webhook-timestamp (within 5 minutes) and webhook-signature.
    event = webhook.verify(body, request.headers);
  } catch (error) {
    console.log(JSON.stringify({ refused: String(error?.message ?? error) }));
    return response.writeHead(400).end();
  }
  const id = request.headers['webhook-id'];
  if (!processed.has(id)) {
    try {
      await handle(event);
    } catch (error) {
      console.error(error);
      return response.writeHead(500).end(); // not processed: the service delivers it again
    }
    processed.add(id);
  }
  // 2xx within 10 seconds is a delivery; anything else is retried.
  response.writeHead(204).end();
});

server.listen(port, host, () => {
  const { address, port: bound } = server.address();
  console.log(JSON.stringify({ listening: `http://${address}:${bound}` }));
});
process.on('SIGTERM', () => server.close());
