# Builds the shortcut-sync executable and runs `serve` on a slim Debian image.
FROM swift:6.2-bookworm AS build
WORKDIR /src
# The client library (linked by `demo`) keeps its outbox in SQLite.
RUN apt-get update && apt-get install -y --no-install-recommends libsqlite3-dev && rm -rf /var/lib/apt/lists/*
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product shortcut-sync --static-swift-stdlib \
    && mkdir /out \
    && cp "$(swift build -c release --show-bin-path)/shortcut-sync" /out/ \
    && cp -R "$(swift build -c release --show-bin-path)"/shortcut-sync_*.resources /out/

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates libcurl4 libxml2 libsqlite3-0 tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home /app shortcut-sync
WORKDIR /app
COPY --from=build /out/ /app/
USER shortcut-sync
# 8080: the API. 8081: the operators' listener (/metrics, /readyz): publish it to the monitoring
# network only, never beside the API.
EXPOSE 8080 8081
# The image has no curl and its /bin/sh is dash: the service's own executable asks GET /readyz.
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=10 \
    CMD ["/app/shortcut-sync", "health", "--url", "http://127.0.0.1:8081", "--timeout", "2"]
ENTRYPOINT ["/app/shortcut-sync"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--operator-host", "0.0.0.0", "--operator-port", "8081"]
