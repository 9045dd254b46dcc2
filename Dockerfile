# capbridge daemon image. Build: docker build -t capbridge .   Run: see compose.yaml.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 and sharp ship prebuilt binaries for linux-x64/arm64 glibc; the toolchain is only a fallback
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY config ./config
COPY src ./src
# npm ci runs `prepare` (tsc), which builds dist/
RUN npm ci && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production CAPBRIDGE_DATA=/data
WORKDIR /app
COPY --from=build /app /app
RUN groupadd --system capbridge && useradd --system --gid capbridge --home-dir /data --shell /usr/sbin/nologin capbridge \
  && mkdir -p /data && chown capbridge:capbridge /data
USER capbridge
VOLUME ["/data"]
# the metrics/health listener: bind all interfaces inside the container, publish on the host's loopback (compose.yaml)
ENV CAPBRIDGE_DAEMON__HOST=0.0.0.0
EXPOSE 9464
HEALTHCHECK --interval=60s --timeout=5s --start-period=30s CMD node -e "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/dist/cli.js"]
CMD ["daemon"]
