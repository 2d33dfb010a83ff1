// Which methods a path answers, so that a path that exists with another method is told
// apart from one that does not exist: 405 with Allow (RFC 9110 §15.5.6), not 404. Fastify's
// router does not say, so a second router holds every route's path and methods (filled as
// routes are registered). One index per app, found from any of its contexts (a decoration
// is inherited by them).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

const ROUTES = Symbol('routes');
interface RouteIndex {
  router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>;
  methods: Set<HTTPMethod>;
}
type Indexed = FastifyInstance & { [ROUTES]?: RouteIndex };

/** Indexes every route registered on `fastify` from now on. */
export function indexRoutes(fastify: FastifyInstance): void {
  const index: RouteIndex = { router: FindMyWay(), methods: new Set() };
  fastify.decorate(ROUTES, index);
  fastify.addHook('onRoute', (route) => {
    // A catch-all route (CORS preflights: OPTIONS *) would make every path exist.
    if (route.url === '*') return;
    for (const method of [route.method].flat() as HTTPMethod[]) {
      index.methods.add(method);
      if (!index.router.hasRoute(method, route.url)) index.router.on(method, route.url, () => {});
    }
  });
}

/** The methods a path answers, in a stable order (empty when no route has the path). */
export function allowedMethods(request: FastifyRequest, path: string): string[] {
  const index = (request.server as Indexed)[ROUTES];
  if (!index) return [];
  return [...index.methods].filter((method) => index.router.find(method, path) !== null).sort();
}
