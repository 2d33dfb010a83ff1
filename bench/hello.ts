// Fastify's hello world, for `npm run bench`: what this machine's HTTP stack answers at
// most, with no database and no work per request (the upper limit any operation is stated
// against).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/v1/pets/:petId', async () => ({ hello: 'world' }));

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`Server listening at ${address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)));
