# syntax=docker/dockerfile:1
#
# Switchboard gateway image.
#
#   docker build -t switchboard .
#   docker run --rm -p 8080:8080 -p 127.0.0.1:9464:9464 \
#     -v "$PWD/my-config.yaml:/etc/switchboard/config.yaml:ro" -e UPSTREAM_TOKEN=... switchboard
#
# Config: the gateway reads SWITCHBOARD_CONFIG=/etc/switchboard/config.yaml. The image ships a default
# there (deploy/examples/image-default.yaml: the demo echo upstream behind JWT auth, needing JWT_ISSUER and
# JWT_JWKS_URL); mount your own file over it (or point SWITCHBOARD_CONFIG elsewhere). The example configs
# are also in the image under /app/examples/. ${VAR} in the config is read from the environment, which is
# where secrets belong. SWITCHBOARD_HOST, SWITCHBOARD_PORT and LOG_LEVEL override the config.
#
# Ports: 8080 MCP endpoints, /healthz and /readyz; 9464 Prometheus metrics (/metrics).
# Upstream commands (stdio MCP servers) must exist in the image: build FROM this one and install them
# (see deploy/README.md). The reference server @modelcontextprotocol/server-everything is a development
# dependency and is not in this image.
# Runs as uid/gid 10001, works with a read-only root filesystem (give it a writable /tmp).

ARG NODE_IMAGE=node:22.23.3-bookworm-slim

# ---- build: full install, compile TypeScript to dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies and dist/ only ----
FROM ${NODE_IMAGE} AS runtime
# OCI annotations: version is package.json's (test/unit/release-version.test.ts keeps them in step).
LABEL org.opencontainers.image.title="switchboard" \
      org.opencontainers.image.description="An MCP gateway: Streamable HTTP and HTTP+SSE sessions multiplexed onto pooled upstream MCP servers" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.source="https://github.com/example/switchboard" \
      org.opencontainers.image.licenses="Apache-2.0"
# bubblewrap: the upstream sandbox. tini: PID 1 that forwards signals and reaps the orphans of upstream
# process groups. node and tini executable but not readable by the gateway's user: Linux makes a process
# that runs a program its user cannot read non-dumpable, and the /proc/<pid>/environ of a non-dumpable
# process only opens with CAP_SYS_PTRACE. So upstream servers under the `limits` sandbox, which run as the
# gateway's own user, cannot read the Secrets the pod passes to the gateway and tini as variables.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap tini \
 && rm -rf /var/lib/apt/lists/* \
 && chmod 0711 "$(command -v node)" /usr/bin/tini \
 && groupadd --system --gid 10001 switchboard \
 && useradd --system --uid 10001 --gid 10001 --home-dir /home/switchboard --create-home --shell /usr/sbin/nologin switchboard
ENV NODE_ENV=production
# Node 22's AsyncLocalStorage runs on async hooks unless node starts with this flag; with tracing on, every
# promise then pays for the span context (5-12 % of an untraced call's CPU more per traced call; README,
# Tracing). Node 24 has async context frames by default and refuses the flag (as Node 22 before 22.7 does):
# building FROM such an image, pass --build-arg NODE_FLAGS= (the npm ci below stops otherwise). A NODE_OPTIONS
# given at run time replaces this one: keep the flag in it. Upstream servers never see it (their
# environment is built from scratch).
ARG NODE_FLAGS=--experimental-async-context-frame
ENV NODE_OPTIONS=${NODE_FLAGS}
WORKDIR /app
COPY package.json package-lock.json ./
# npm leaves its cache and logs in /root/.npm and Node's module compile cache in /tmp: none belongs in the image.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && rm -rf /root/.npm /tmp/node-compile-cache
COPY --from=build /src/dist ./dist
# The admin listener's web console: static files it serves at / (admin.enabled).
COPY console ./console
COPY deploy/examples ./examples
COPY deploy/examples/image-default.yaml /etc/switchboard/config.yaml
ENV SWITCHBOARD_CONFIG=/etc/switchboard/config.yaml
USER 10001:10001
EXPOSE 8080 9464
# No curl in the slim image: node's fetch. The gateway writes where it answers /healthz (the metrics listener's
# host and port of whatever config is mounted, or server.host and .port with metrics off; a wildcard host as
# loopback) to SWITCHBOARD_ADDRESS_FILE once it listens: not the MCP port, which closes new connections at
# accept once server.maxConnections are open. Before that, or where /tmp is not writable, the check tries
# SWITCHBOARD_PORT, else 8080. Plain node -e, not the
# gateway's CLI: the check runs every 15 s and stays as cheap as node's start.
ENV SWITCHBOARD_ADDRESS_FILE=/tmp/switchboard-address
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "let u='http://127.0.0.1:'+(process.env.SWITCHBOARD_PORT||8080);try{u=require('fs').readFileSync(process.env.SWITCHBOARD_ADDRESS_FILE,'utf8').trim()}catch{}fetch(u+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM drains and exits 0 (server.shutdownGraceMs, default 25 s): give it at least 30 s to stop.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/main.js"]
CMD ["serve"]
