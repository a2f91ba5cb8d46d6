// swift-tools-version: 6.2
import Foundation
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// `.ci/fuzz` builds (in a build folder of its own) with SHORTCUT_SYNC_FUZZ=1: the domain, whose
/// readers of client bytes it fuzzes, and the fuzz target are built for libFuzzer with the
/// address sanitizer; nothing else is.
let fuzzing = ProcessInfo.processInfo.environment["SHORTCUT_SYNC_FUZZ"] == "1"
let fuzzed: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"]), .define("FUZZING")] : []

let package = Package(
    name: "shortcut-sync",
    // iOS, watchOS and visionOS are for apps that embed ShortcutSyncClient (not built on this Linux machine).
    platforms: [.macOS(.v15), .iOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .executable(name: "shortcut-sync", targets: ["ShortcutSyncCLI"]),
        .executable(name: "client-bytes-fuzz", targets: ["ClientBytesFuzz"]),
        .library(name: "ShortcutSyncDomain", targets: ["ShortcutSyncDomain"]),
        .library(name: "ShortcutSyncAPI", targets: ["ShortcutSyncAPI"]),
        .library(name: "ShortcutSyncClient", targets: ["ShortcutSyncClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // jwt-kit 5 (the APNs provider token) needs swift-crypto 4.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // Base64url for tokens and pull cursors (Foundation's string replacements were a tenth of a pull's CPU).
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
        // Spans (the API) everywhere a change goes; swift-otel exports them over OTLP/HTTP when
        // `serve --otel-endpoint` is given. Its gRPC exporter is left out: it would add gRPC to the build.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        // Only for DonationFieldTests, which reads openapi.yaml (already built for the OpenAPI generator).
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    ],
    targets: [
        // Pure domain: events, clock, phrases, the fold. Foundation only.
        .target(
            name: "ShortcutSyncDomain",
            swiftSettings: swiftSettings + fuzzed
        ),
        // The fuzz targets of the readers of a client's bytes (Fuzz/ClientBytesFuzz: the push body,
        // the pull cursor's payload): libFuzzer's under `.ci/fuzz`, a replayer of Fuzz/corpus otherwise.
        .executableTarget(
            name: "ClientBytesFuzz",
            dependencies: ["ShortcutSyncDomain"],
            path: "Fuzz/ClientBytesFuzz",
            swiftSettings: swiftSettings + fuzzed,
            linkerSettings: fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []
        ),
        // Files that hold secrets (a password, a token): owner-only from the moment they exist. Foundation only.
        .target(
            name: "SecretFiles",
            swiftSettings: swiftSettings
        ),
        // A local PostgreSQL cluster of its own: found, created, started and stopped (a `Service`).
        // Its tools run through swift-subprocess, so that no thread of the async runtime waits for them.
        .target(
            name: "EmbeddedPostgres",
            dependencies: [
                "SecretFiles",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The only module that speaks SQL: migrations, the event log, projections.
        .target(
            name: "ShortcutSyncStore",
            dependencies: [
                "ShortcutSyncDomain",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Only to recognise the pool's errors as "the database is unavailable".
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                // SHA-256 of an event id: what a compaction keeps to recognise its retry (`RetryFingerprints`).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // The numbered migrations; the top-level Schema/ is a link to them.
            resources: [.copy("Schema")],
            swiftSettings: swiftSettings
        ),
        // The sync worker: follows the log and keeps the per-device projections.
        .target(
            name: "ShortcutSyncWorker",
            dependencies: [
                "ShortcutSyncDomain",
                "ShortcutSyncStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `shortcut-sync` executable as a child process (`serve` among them): for the bench's
        // service and for the tests of the command line. Run through swift-subprocess, so that
        // no thread of the async runtime waits for a child.
        .target(
            name: "ShortcutSyncChildProcess",
            dependencies: [
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        // Background wakes (DESIGN §6): the APNs client with its provider token, and the waker
        // that finds devices behind their account's version and wakes each one once.
        .target(
            name: "ShortcutSyncWake",
            dependencies: [
                "ShortcutSyncDomain",
                "ShortcutSyncStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // A local APNs stand-in (Apple cannot be reached from here), for the tests, the demo and
        // the bench: HTTP/2 over TLS on loopback with a certificate made at run time; it checks
        // requests as Apple does and answers as it is told.
        .target(
            name: "APNsStandIn",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The benchmarks of DESIGN §8 (`shortcut-sync bench`): histories and load, beside raw PostgreSQL.
        .target(
            name: "ShortcutSyncBench",
            dependencies: [
                "ShortcutSyncDomain",
                "ShortcutSyncStore",
                "ShortcutSyncWorker",
                "ShortcutSyncChildProcess",
                "EmbeddedPostgres",
                "APNsStandIn",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                // `bench push`: the load, over HTTP, and its latency percentiles.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                // `bench push`'s stack floor: a push served on the same HTTP server and PostgreSQL client, nothing else.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The operators' commands (`shortcut-sync admin`): reports for people and scripts, the export format.
        .target(
            name: "ShortcutSyncAdmin",
            dependencies: [
                "ShortcutSyncDomain",
                "ShortcutSyncStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Types, server stubs and client generated from openapi.yaml; the document itself ships
        // as a resource too, for `GET /openapi.yaml`. The schemas of domain values are the
        // domain's types (typeOverrides in openapi-generator-config.yaml).
        .target(
            name: "ShortcutSyncAPI",
            dependencies: [
                "ShortcutSyncDomain",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            resources: [.copy("openapi.yaml")],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // What an app embeds: SiriKit-like calls, a durable outbox and view (SQLite), pushes, pulls
        // and the stream, over any OpenAPI transport (AsyncHTTPClient on Linux, URLSession on Apple's).
        .target(
            name: "ShortcutSyncClient",
            dependencies: [
                "ShortcutSyncDomain",
                "ShortcutSyncAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // HMAC-SHA256 for place tokens (`PlaceKey`).
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                // `traceparent` on each request: the app's own spans, or the poke's that the pull follows.
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // `shortcut-sync demo`: the service and three simulated devices built on the client library.
        .target(
            name: "ShortcutSyncDemo",
            dependencies: [
                "ShortcutSyncClient", "ShortcutSyncApp", "ShortcutSyncServer", "ShortcutSyncStore", "ShortcutSyncDomain", "ShortcutSyncAPI",
                "ShortcutSyncWake", "APNsStandIn",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP service: the only module that speaks HTTP. It knows the store, not the
        // maintenance tasks nor APNs: the process that runs it wires those in (ShortcutSyncApp).
        .target(
            name: "ShortcutSyncServer",
            dependencies: [
                "ShortcutSyncDomain",
                "ShortcutSyncStore",
                "ShortcutSyncAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The composition root: one build function per kind of process (serve, worker, admin),
        // which the command line, the demo and the tests call.
        .target(
            name: "ShortcutSyncApp",
            dependencies: [
                "ShortcutSyncServer",
                "ShortcutSyncStore",
                "ShortcutSyncWorker",
                "ShortcutSyncWake",
                "ShortcutSyncAdmin",
                "SecretFiles",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ShortcutSyncCLI",
            dependencies: [
                "ShortcutSyncDomain",
                "ShortcutSyncStore",
                "ShortcutSyncServer",
                "ShortcutSyncApp",
                "ShortcutSyncBench",
                "ShortcutSyncAdmin",
                "ShortcutSyncDemo",
                "ShortcutSyncWake",
                "EmbeddedPostgres",
                "SecretFiles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `health` asks a running service for /readyz.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/shortcut-sync",
            swiftSettings: swiftSettings
        ),
        // Bounds how many tests run at once (three a core), as the test process loads: unbounded,
        // every test starts at once and connections to the shared cluster time out.
        .target(name: "TestRunWidth", path: "Tests/TestRunWidth"),
        // Shared by the test targets, the domain's included: devices that script events, a seeded
        // generator, scenarios, event factories, "eventually". Domain only, no database.
        .target(
            name: "ShortcutSyncTestSupport",
            dependencies: ["ShortcutSyncDomain", "TestRunWidth"],
            path: "Tests/ShortcutSyncTestSupport/Domain",
            swiftSettings: swiftSettings
        ),
        // Shared by the test targets that need PostgreSQL: a real database per test, the real
        // serve as a child process, the log read past the horizon, row counts.
        .target(
            name: "ShortcutSyncDatabaseTestSupport",
            dependencies: [
                "ShortcutSyncTestSupport",
                "ShortcutSyncChildProcess",
                "ShortcutSyncDomain",
                "ShortcutSyncStore",
                "ShortcutSyncWorker",
                "EmbeddedPostgres",
                "SecretFiles",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/ShortcutSyncTestSupport/Database",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ShortcutSyncDomainTests",
            dependencies: [
                "ShortcutSyncDomain", "ShortcutSyncTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ShortcutSyncStoreTests",
            dependencies: [
                "ShortcutSyncStore", "ShortcutSyncDomain", "ShortcutSyncTestSupport", "ShortcutSyncDatabaseTestSupport", "ShortcutSyncChildProcess",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The embedded cluster: its secrets, and its tools started without this process's descriptors.
        .testTarget(
            name: "EmbeddedPostgresTests",
            dependencies: [
                "EmbeddedPostgres", "SecretFiles", "ShortcutSyncStore", "ShortcutSyncDatabaseTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SecretFilesTests",
            dependencies: ["SecretFiles"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ShortcutSyncWorkerTests",
            dependencies: [
                "ShortcutSyncWorker", "ShortcutSyncStore", "ShortcutSyncDomain", "ShortcutSyncTestSupport", "ShortcutSyncDatabaseTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Read by path: a database of the previous schema, for the upgrade test.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        // The benchmarks' own: a small run measures the whole log and leaves correct projections.
        .testTarget(
            name: "ShortcutSyncBenchTests",
            dependencies: [
                "ShortcutSyncBench", "ShortcutSyncWorker", "ShortcutSyncStore", "ShortcutSyncDomain", "ShortcutSyncDatabaseTestSupport",
                // StackFloorTests: pushes to the stack's floor over HTTP, on a free loopback port.
                "EmbeddedPostgres",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ShortcutSyncAdminTests",
            dependencies: [
                "ShortcutSyncAdmin", "ShortcutSyncWorker", "ShortcutSyncStore", "ShortcutSyncDomain", "ShortcutSyncTestSupport",
                "ShortcutSyncDatabaseTestSupport", "ShortcutSyncChildProcess", "EmbeddedPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ShortcutSyncServerTests",
            dependencies: [
                "ShortcutSyncServer", "ShortcutSyncApp", "ShortcutSyncClient", "ShortcutSyncWorker", "ShortcutSyncAPI", "ShortcutSyncStore", "ShortcutSyncDomain", "ShortcutSyncTestSupport", "ShortcutSyncDatabaseTestSupport",
                "ShortcutSyncChildProcess", "EmbeddedPostgres", "SecretFiles", "ShortcutSyncWake", "ShortcutSyncAdmin", "APNsStandIn",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // AnswerMiddlewareTests: a request context on a channel of its own, metrics on a registry of their own.
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // TracingTests' OTLP receiver reads the service's spans as a collector would.
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
