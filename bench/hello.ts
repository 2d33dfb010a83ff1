// The physical limit for `npm run bench`: Fastify's hello world on this machine (no
// database, no hooks, no logging). Whatever an operation does, it cannot be served faster.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`Server listening at ${address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)));
