// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Haul",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Haul", targets: ["Haul"]),
        .library(name: "HaulTestServer", targets: ["HaulTestServer"]),
        .executable(name: "haul", targets: ["HaulCLI"]),
        .executable(name: "haul-test-server", targets: ["HaulTestServerTool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.36.0"),
        // NIOHTTP2: the SETTINGS frame that widens each HTTP/2 stream's first window (`HTTPTransport`).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        // NIOSOCKS: the errors of AsyncHTTPClient's SOCKS5 client, told apart for their messages.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // The PostgreSQL store (`haul daemon --store postgresql://…`): a NIO client, portable like the rest.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The library's instruments (a no-op unless the app bootstraps a backend or passes a factory).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // `haul daemon`'s `/metrics`: the backend that renders those instruments as Prometheus text.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // `swift package generate-documentation --target Haul`: the DocC catalog, built by scripts/test.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "Haul",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // TLS settings (trusted CAs, client certificates) and TLS errors: AsyncHTTPClient's own TLS library.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                // What a SOCKS proxy answered (refused the origin, wants credentials): AsyncHTTPClient's SOCKS library.
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                // AES-128-CBC, to decrypt encrypted HLS segments when joining them.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for binding the store's wide rows without GRDB's existentials.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // `haul daemon`: sessions on the durable store, served over JSON-RPC (aria2 + haul.*)
        // on a unix socket and loopback TCP.
        .target(
            name: "HaulDaemon",
            dependencies: [
                "Haul",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .executableTarget(
            name: "HaulCLI",
            dependencies: [
                "Haul",
                "HaulDaemon",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "HaulTestServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "HaulTestServerTool",
            dependencies: [
                "HaulTestServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Helpers shared by the test targets (test targets cannot import one another).
        .target(
            name: "HaulTestSupport",
            path: "Tests/HaulTestSupport"
        ),
        .testTarget(
            name: "HaulTests",
            dependencies: [
                "Haul", "HaulTestServer", "HaulCrashWorker", "HaulTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                // AES-128-CBC, to encrypt the segments the join must decrypt.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The parser errors a misbehaving server causes (ProtocolViolationTests).
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The relay that cuts a store's connection at its COMMIT (CommitCuttingRelay).
                .product(name: "NIOPosix", package: "swift-nio"),
                // The SETTINGS frame a new HTTP/2 connection sends (HTTP2StreamWindowTests).
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                // The SOCKS answers TransportFailureTests maps.
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                // A factory that records what the manager's instruments were told (ManagerMetricsTests).
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // The child process that CrashRecoveryTests kill -9 over and over. Test-only, so not a
        // product; HaulTests depends on it so that `swift build --build-tests` builds it.
        .executableTarget(
            name: "HaulCrashWorker",
            dependencies: ["Haul", "HaulTestSupport"],
            path: "Tests/HaulCrashWorker"
        ),
        // bench/queue-scale.sh: what 100,000 queued downloads cost. Not a product.
        .executableTarget(
            name: "haul-queue-scale",
            dependencies: ["Haul", "HaulTestServer"],
            path: "bench/QueueScale"
        ),
        // bench/http-floor.sh: AsyncHTTPClient alone on job (b), the floor under `haul get`. Not a product.
        .executableTarget(
            name: "haul-http-floor",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "bench/HTTPFloor"
        ),
        .testTarget(
            name: "HaulTestServerTests",
            dependencies: [
                "HaulTestServer", "HaulTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The app process of the background-session tests (killed -9 like an app). Test-only.
        .executableTarget(
            name: "HaulSessionClient",
            dependencies: [
                "Haul", "HaulTestServer",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/HaulSessionClient"
        ),
        .testTarget(
            name: "HaulDaemonTests",
            dependencies: [
                "HaulDaemon", "Haul", "HaulTestServer", "HaulTestSupport", "HaulSessionClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The tests' own HTTP and WebSocket clients, which reach the unix socket too.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "HaulCLITests",
            dependencies: [
                "HaulCLI", "HaulDaemon", "HaulTestServer", "HaulTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                // The store's dates moved back by hand (GetRerunIntactTests' nightly sync).
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
