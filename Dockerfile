# The gateway in production: Node 24 LTS, production dependencies only, as a non-root user.
# Build: docker build -t payment-kyc-gateway .   Run: see deploy/compose.yaml for the settings.

# Dependencies, installed from the lockfile without development packages or install scripts.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# Runtime: the sources run as they are (Node strips the types), no build step.
FROM node:24-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY schema ./schema
COPY src ./src
COPY web ./web
USER node

# DEMO ONLY (the "demo" profile of deploy/compose.yaml): the upstream simulators with invented
# payments, in an image of their own. The gateway's image below does not contain them.
FROM runtime AS sandbox
COPY sandbox ./sandbox
CMD ["node", "sandbox/main.ts"]

# The gateway (the default target).
FROM runtime
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "src/main.ts"]
