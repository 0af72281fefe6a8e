# A2A gRPC server. Build: docker build -t a2a-grpc-server .
# Run:   docker run -p 50051:50051 -p 8080:8080 -v a2a-data:/data -e A2A_AUTH=none a2a-grpc-server
# (No "# syntax=" line: it would pull a Dockerfile frontend image; the built-in one suffices.)
#
# Offline (no image registry): build a stand-in base from Debian and npm packages, then
# pass it and the CA bundle npm needs here (see README "Container", "Building offline"):
#   scripts/build-offline-base.sh localhost/a2a-node-base:20
#   buildah bud --format docker --build-arg BASE_IMAGE=localhost/a2a-node-base:20 \
#     --secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt -t a2a-grpc-server .
# A2A_AUTH is deliberately not set here: listening on 0.0.0.0, the server refuses to start until
# the operator picks jwt, api-key, mtls (see README "Authentication") or none (anonymous on purpose).

# Any image with Node 20 on Debian 12 (bookworm), with a `node` user of uid 1000.
ARG BASE_IMAGE=node:20-bookworm-slim

FROM ${BASE_IMAGE} AS build
# Compilers for better-sqlite3, used only when its prebuilt binary cannot be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# That source build takes Node's headers from this image (/usr/local/include/node)
# instead of downloading them from nodejs.org, which may be just as unreachable.
ENV npm_config_nodedir=/usr/local
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json buf.yaml buf.gen.yaml ./
COPY scripts ./scripts
COPY proto ./proto
COPY gen ./gen
COPY src ./src
# Never --omit=optional: buf's binary is an optional dependency. `prepare` vendors the
# third-party protos and compiles. An extra CA bundle can be passed as the build secret
# npm_ca where a proxy needs it; it never lands in a layer.
RUN --mount=type=secret,id=npm_ca,required=false \
    if [ -f /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi \
 && npm ci --no-audit --no-fund \
 && npm run build \
 && npm prune --omit=dev --no-audit --no-fund
# better-sqlite3 needs only its compiled addon at run time; its C sources and a source
# build's object files would add about 25 MB to the image.
RUN addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node \
 && mv "$addon" /tmp/ \
 && rm -rf node_modules/better-sqlite3/build node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && mkdir -p "$(dirname "$addon")" \
 && mv /tmp/better_sqlite3.node "$addon"

FROM ${BASE_IMAGE}
ENV NODE_ENV=production \
    A2A_LISTEN=0.0.0.0:50051 \
    A2A_CARD_LISTEN=0.0.0.0:8080 \
    A2A_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 50051 8080
# grpc.health.v1.Health/Check on the listen address, 3 s deadline.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["node", "dist/src/healthcheck.js"]
# Exec form: SIGTERM goes straight to node, which drains and exits within A2A_SHUTDOWN_GRACE_MS.
ENTRYPOINT ["node", "dist/src/main.js"]
