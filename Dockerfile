# syntax=docker/dockerfile:1
# The market-data service as a container image: `docker build -t market-data .` (docs/deployment.md).
#
# Two stages on the same pinned Node (the version of the `node` devDependency in package.json, which a test
# checks): `deps` installs the production dependencies with npm's cache and the manifests, the runtime stage
# keeps only what the server runs. Node 24 runs the TypeScript sources as they are (it strips the types), so
# there is no build step.

ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# The manifests alone first, so the install layer is rebuilt only when a dependency changes. npm ci needs every
# workspace the lockfile names, the test and examples manifests included (their sources are not in the image).
COPY package.json package-lock.json ./
COPY core/package.json core/
COPY adapters/memory/package.json adapters/memory/
COPY adapters/postgres/package.json adapters/postgres/
COPY adapters/sources/package.json adapters/sources/
COPY adapters/mcp/package.json adapters/mcp/
COPY adapters/http/package.json adapters/http/
COPY embedded/package.json embedded/
COPY infra/package.json infra/
COPY test/package.json test/
COPY examples/package.json examples/
# --omit=dev: no compiler, test runner or the Node binary of the `node` devDependency (the image has its own).
RUN npm ci --omit=dev --no-audit --no-fund
COPY core/ core/
COPY adapters/ adapters/
COPY infra/ infra/

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    MARKET_DATA_DIR=/data
WORKDIR /app
# The application stays owned by root and read-only to the service; only the data folder (the embedded PGlite
# store, when DATABASE_URL is unset) is writable by it.
COPY --from=deps /app /app
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
# The official image's unprivileged user (uid 1000).
USER node
EXPOSE 8080
# Alive: /healthz answers 200 while the process serves. Readiness (/readyz: 503 until the stores are open and
# the baselines warm) is for the load balancer, not for restarting the container. The image has no curl: Node's
# own fetch asks.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
# node itself is PID 1's child under `docker run --init` (compose sets `init: true`); `serve` drains in-flight
# requests, closes the stores and exits 0 on SIGTERM, which is what `docker stop` sends.
ENTRYPOINT ["node", "infra/src/bin.ts"]
CMD ["serve"]
