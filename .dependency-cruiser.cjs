// The house's rules (npm run lint:deps; test/architecture.test.ts runs the same): no import
// cycle, and no arrow that runs back up. The rooms of src/ in layers, top first: a room
// imports only rooms of the layers below its own, never one above or beside it. A new
// room is placed in this list; an import the list forbids names the rule it broke.
const layers = [
  ['server.ts', 'cli'], // start-up and the operators' commands
  ['app.ts'], // composes the feature plugins
  ['handlers'], // one module per operationId
  ['middleware', 'plugins'], // per-operation steps; the service's own routes and hooks
  ['routes'], // the contract served as Fastify routes
  ['events', 'store'], // features that read others: the feed and its delivery; orders
  ['catalogue', 'pagination'], // pets, categories, inventory; cursors and pages
  ['api-keys'], // keys, the verifier, bearer authentication
  ['errors'], // every error answer
  ['http'], // below Fastify: messages, headers, pipelining
  ['contract'], // the contract's facts and types, from generated/
  ['jobs', 'db'], // timed work; PostgreSQL
  ['tracing'], // OpenTelemetry: the SDK's start, and the trace context as the rest sees it
  ['config.ts'],
  ['paths.ts'],
];

const pattern = (rooms) => `^src/(${rooms.map((r) => r.replace('.', '\\.') + (r.endsWith('.ts') ? '$' : '/')).join('|')})`;

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'An import cycle: break it by moving what both need below both.', from: {}, to: { circular: true } },
    ...layers.flatMap((rooms, i) => [
      ...(i > 0
        ? [
            {
              name: `no-arrow-up-from-${rooms.join('-')}`,
              severity: 'error',
              comment: `${rooms.join(', ')} may not import a room of a layer above it (.dependency-cruiser.cjs lists them)`,
              from: { path: pattern(rooms) },
              to: { path: pattern(layers.slice(0, i).flat()) },
            },
          ]
        : []),
      ...(rooms.length > 1
        ? [
            {
              name: `no-arrow-beside-${rooms.join('-')}`,
              severity: 'error',
              comment: `${rooms.join(' and ')} share a layer and may not import each other`,
              from: { path: pattern(rooms) },
              to: { path: pattern(rooms), pathNot: '$1' },
            },
          ]
        : []),
    ]),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
