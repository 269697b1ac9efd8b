// swift-tools-version:6.2
import PackageDescription

// Layers (arrows point one way):
//   reiterate-stub (executable) -> StubServer (Hummingbird responder) -> StubCore (data, state, faults; no I/O)
// The shop client's layers (REST core, cache, view models, front end) arrive with their issues.

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "reiterate-shop",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reiterate-stub", targets: ["reiterate-stub"]),
        .library(name: "StubServer", targets: ["StubServer"]),
    ],
    dependencies: [
        // Server framework for the staging stand-in (README: "Dependencies").
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(name: "StubCore", swiftSettings: strict),
        .target(
            name: "StubServer",
            dependencies: [
                "StubCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "reiterate-stub",
            dependencies: [
                "StubServer",
                "StubCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "StubCoreTests", dependencies: ["StubCore"], swiftSettings: strict),
    ]
)
