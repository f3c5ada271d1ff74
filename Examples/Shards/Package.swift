// swift-tools-version:6.1
import PackageDescription

// An app developer's package, outside Haul: it depends on Haul by path and uses only its
// public API. `shards-app` is the seeds' app (resources of shards, acted on once when each
// is complete, surviving its own kill -9 and the daemon's); `ReadmeSnippets` is the Swift of
// Haul's README, extracted by `scripts/readme-snippets` so that CI compiles what the README shows.
let package = Package(
    name: "Shards",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Haul", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "shards-app",
            dependencies: [.product(name: "Haul", package: "Haul")]
        ),
        .target(
            name: "ReadmeSnippets",
            dependencies: [.product(name: "Haul", package: "Haul")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
