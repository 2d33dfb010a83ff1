// Fastify's hello world, for `npm run bench`: what this machine's HTTP stack answers at
// most, with no database and no work per request (the upper limit any operation is stated
// against). It also answers the mixed traffic's other requests with constants (a list with
// a constant `Link: rel="next"`, so a browse follows it as it would on the service; a
// create, whose JSON body Fastify parses, named in `Location`; a rename and a removal; an
// order placed, completed or cancelled), so the profile of mixed traffic can be set against
// the same requests costing nothing but HTTP and the framework (bench/profile.ts).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/v1/pets/:petId', async () => ({ hello: 'world' }));
app.get('/v1/pets', async (_request, reply) => reply.header('link', '</v1/pets?after=1>; rel="next"').send([{ hello: 'world' }]));
app.post('/v1/pets', async (_request, reply) => reply.code(201).header('location', '/v1/pets/1').send({ hello: 'world' }));
// The catalogue's staff (`mixed: catalogue`): a rename, and the removal of what was added.
app.patch('/v1/pets/:petId', async () => ({ hello: 'world' }));
app.delete('/v1/pets/:petId', async (_request, reply) => reply.code(204).send());
// Buying (`mixed: pets and orders`): a placement names its order in `Location`, as the service's does.
app.post('/v1/store/orders', async (_request, reply) => reply.code(201).header('location', '/v1/store/orders/1').send({ hello: 'world' }));
app.post('/v1/store/orders/:orderId/:action', async () => ({ hello: 'world' }));

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`Server listening at ${address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)));
