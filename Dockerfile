# syntax=docker/dockerfile:1
# The service's image: Node 24 LTS, production dependencies only, a non-root user, no shell needed.

ARG NODE_IMAGE=node:24-bookworm-slim

# Dependencies in their own stage: the lockfile decides, dev dependencies never reach the image.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json openapi.yaml ./
COPY src ./src
COPY workers ./workers
# The official image's unprivileged user (uid 1000); the app writes nothing to disk.
USER node
EXPOSE 3000
# SIGTERM starts the drain (close-with-grace); give the container SHUTDOWN_GRACE_MS (35 s by
# default) plus a margin before it is killed: docker stop -t 40, stop_grace_period: 40s.
STOPSIGNAL SIGTERM
# Liveness through Node's own fetch: no curl in the image.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives the signals itself; it spawns no child processes to reap.
CMD ["node", "src/server.js"]
