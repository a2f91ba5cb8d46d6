// swift-tools-version: 6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "shortcut-sync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "shortcut-sync", targets: ["ShortcutSyncCLI"]),
        .library(name: "ShortcutSyncDomain", targets: ["ShortcutSyncDomain"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // Pure domain: events, clock, phrases, the fold. Foundation only.
        .target(
            name: "ShortcutSyncDomain",
            swiftSettings: swiftSettings
        ),
        // The only module that speaks SQL: migrations, the event log, the embedded cluster.
        .target(
            name: "ShortcutSyncStore",
            dependencies: [
                "ShortcutSyncDomain",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The numbered migrations; the top-level Schema/ is a link to them.
            resources: [.copy("Schema")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ShortcutSyncCLI",
            dependencies: [
                "ShortcutSyncDomain",
                "ShortcutSyncStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/shortcut-sync",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ShortcutSyncDomainTests",
            dependencies: [
                "ShortcutSyncDomain",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        // Shared by the test targets: a real PostgreSQL per test.
        .target(
            name: "ShortcutSyncTestSupport",
            dependencies: [
                "ShortcutSyncStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ShortcutSyncTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ShortcutSyncStoreTests",
            dependencies: [
                "ShortcutSyncStore", "ShortcutSyncDomain", "ShortcutSyncTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
