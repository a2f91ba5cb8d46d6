# Builds the shortcut-sync executable and runs `serve` on a slim Debian image.
FROM swift:6.2-bookworm AS build
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product shortcut-sync --static-swift-stdlib \
    && mkdir /out \
    && cp "$(swift build -c release --show-bin-path)/shortcut-sync" /out/ \
    && cp -R "$(swift build -c release --show-bin-path)/shortcut-sync_ShortcutSyncStore.resources" /out/

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates libcurl4 libxml2 tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home /app shortcut-sync
WORKDIR /app
COPY --from=build /out/ /app/
USER shortcut-sync
EXPOSE 8080
ENTRYPOINT ["/app/shortcut-sync"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
