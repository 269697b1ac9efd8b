// swift-tools-version:6.2
import PackageDescription

// Layers: each target lists the targets it depends on, and the arrows point one way. docs/architecture.md
// draws them, one line a target (Tests/contract/test_docs.py holds that picture to this file), and says what
// each target holds. Tests of ShopAPI run the stand-in in-process (StubServer) on 127.0.0.1.

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "reiterate-shop",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reiterate-shop", targets: ["reiterate-shop"]),
        .executable(name: "reiterate-stub", targets: ["reiterate-stub"]),
        .executable(name: "reiterate-contract", targets: ["reiterate-contract"]),
        .library(name: "ShopAPI", targets: ["ShopAPI"]),
        .library(name: "StubServer", targets: ["StubServer"]),
    ],
    dependencies: [
        // Server framework for the staging stand-in (docs/dependencies.md).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        // HTTP transport of the REST core: ~0 CPU while waiting, real cancellation (docs/dependencies.md, docs/benchmarks.md).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // Already in the tree through the two above; named because ShopAPI imports their modules.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Header fields (`HTTPFields`) for the REST core; already in the tree through Hummingbird.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // config.toml: any valid TOML (arrays for `users`, `[keys]`); docs/dependencies.md.
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        // The contract read from its OpenAPI document (the watchdog's schemas, statuses, media types),
        // so a newer contract needs no rebuild (`--contract`); docs/dependencies.md.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // The proxy's CA and per-host leaf certificates (`reiterate-shop proxy`): X.509 with name
        // constraints, P-256 keys; docs/dependencies.md.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        // Client side.
        .target(name: "TerminalText", swiftSettings: strict),
        // The one JSON scanner (bytes → tokens with ranges) and what reads it: the exact value tree,
        // the redactor's rewrite, the pretty-printer, the surrogate repair. A leaf, so `make fuzz` builds it alone.
        .target(name: "JSONTokens", swiftSettings: strict),
        .target(
            name: "ShopAPI",
            dependencies: [
                "TerminalText", "JSONTokens",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),  // the handshake event (CertificateProbe)
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            // The contract the watchdog reads when no --contract is given: a copy of the shared
            // document, its bytes embedded in the code (no resource bundle beside the binary).
            // Beside it, the form OpenAPIKit reads it in (`make contract`; a test keeps the two in step), so
            // a session does not parse the document to start.
            resources: [.embedInCode("Contract/reiterate-api.yaml"), .embedInCode("Contract/reiterate-api.contract.json")],
            swiftSettings: strict
        ),
        // The proxy's HTTP/1.1 request reader: heads, framing, chunked bodies, the ambiguities it refuses
        // and its limits. Pure (no NIO), a leaf, so `make fuzz` builds it alone.
        .target(name: "ProxyWire", swiftSettings: strict),
        // The App Store Server API (issue 38): its signed records (JWS verified to a configured root with
        // swift-certificates), its tokens, and its three reads, sent over ShopAPI's transport.
        .target(
            name: "AppStoreRecord",
            dependencies: [
                "ShopAPI",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // The purchase ledger (`reiterate-shop ledger`): the App Store's verified transactions held against
        // the backend's purchase_cheer exchanges, one verdict each (the judgement is pure), and the App Store
        // read and the probe's posts that feed it (`LedgerSources`, over AppStoreRecord's and ShopAPI's clients).
        .target(name: "ShopLedger", dependencies: ["AppStoreRecord", "ShopModel", "ShopAPI", "JSONTokens", "TerminalText"], swiftSettings: strict),
        // The proxy's certificate authority: a name-constrained P-256 CA kept in the state folder, leaf
        // certificates per host, PEM and iOS configuration profiles. Knows no network.
        .target(
            name: "ProxyCA",
            dependencies: [
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // The intercepting proxy (`reiterate-shop proxy`, `--proxy`): SwiftNIO server, CONNECT,
        // TLS interception with ProxyCA's leaves, blind tunnels; the app's exchanges go through ShopAPI's
        // pipeline with the source `app`, forwarded upstream by ShopAPI's transport.
        .target(
            name: "ShopProxy",
            dependencies: [
                "ProxyWire", "ProxyCA", "ShopAPI", "JSONTokens",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The OpenAPI document read by OpenAPIKit and Yams, in its own executable: the app runs it for
        // a --contract document it has not kept, so the app's binary carries neither library.
        .target(
            name: "ContractReader",
            dependencies: ["ShopAPI", .product(name: "OpenAPIKit", package: "OpenAPIKit"), .product(name: "Yams", package: "Yams")],
            swiftSettings: strict
        ),
        .executableTarget(name: "reiterate-contract", dependencies: ["ContractReader", "ShopAPI", "TerminalText"], swiftSettings: strict),
        .systemLibrary(name: "CNcursesw", providers: [.apt(["libncurses-dev"])]),
        // The commit `--version` names: a fixed field in the binary that `make release` fills in after
        // linking (scripts/stamp-build.py), so a new commit costs no rebuild.
        .target(name: "BuildStamp"),
        .target(
            name: "ShopTUI",
            dependencies: ["ShopViewModels", "ShopAPI", "ShopCompare", "ShopLedger", "AppStoreRecord", "JSONTokens", "TerminalText", "CNcursesw"],
            swiftSettings: strict
        ),
        .target(
            name: "ShopSettings",
            // ShopAPI for the environment's `Tier`, which the view models share without reading a config.
            dependencies: ["ShopAPI", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: strict
        ),
        .target(
            name: "ShopCache",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Comparisons (`snapshot`, `compare`, `replay`): the structural diff keyed by the shop's
        // identities, ignore rules, snapshot and HAR files. Pure: reads JSON values, knows no network.
        .target(name: "ShopCompare", dependencies: ["ShopAPI", "JSONTokens", "TerminalText"], swiftSettings: strict),
        // The shop's model: what a user can observe, the rules the contract states in words, the one
        // settled-read rule and the timeline a read is judged against. Pure: no I/O, depends on nothing.
        .target(name: "ShopModel", swiftSettings: strict),
        .target(
            name: "ShopViewModels",
            dependencies: [
                "ShopModel", "ShopAPI", "ShopCache", "TerminalText", "JSONTokens", "ShopCompare", "ShopLedger", "AppStoreRecord",
            ],
            swiftSettings: strict
        ),
        // The CLI's runs over the REST core, out of the executable: `negative`'s catalogue, runner and
        // judging of its reads, `replay`'s settled reads and reports (the executable parses and prints).
        .target(
            name: "ShopProbes",
            dependencies: ["ShopViewModels", "ShopModel", "ShopCompare", "ShopProxy", "ShopAPI", "ShopCache", "AppStoreRecord", "ShopLedger", "ShopSettings", "TerminalText", "JSONTokens"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "reiterate-shop",
            dependencies: [
                "ShopProbes",
                "ShopTUI",
                "ShopSettings",
                "ShopViewModels",
                "ShopModel",
                "ShopCache",
                "ShopAPI",
                "TerminalText",
                "JSONTokens",
                "ShopCompare",
                "ShopProxy",
                "AppStoreRecord",
                "ShopLedger",
                "BuildStamp",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // The staging stand-in.
        .target(name: "StubCore", swiftSettings: strict),
        .target(
            name: "StubServer",
            dependencies: [
                "StubCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                // HTTPS for the TLS tests and demo (NIOSSL is already built for the client).
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                // The App Store side's test chain, API key and signed transactions (issue 38).
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
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
        .testTarget(name: "TerminalTextTests", dependencies: ["TerminalText"], swiftSettings: strict),
        .testTarget(name: "JSONTokensTests", dependencies: ["JSONTokens"], swiftSettings: strict),
        .testTarget(name: "ShopCacheTests", dependencies: ["ShopCache"], swiftSettings: strict),
        .testTarget(name: "ShopCompareTests", dependencies: ["ShopCompare", "ShopLedger", "ShopAPI", "JSONTokens"], swiftSettings: strict),
        .testTarget(name: "ProxyWireTests", dependencies: ["ProxyWire"], swiftSettings: strict),
        .testTarget(name: "ProxyCATests", dependencies: ["ProxyCA"], swiftSettings: strict),
        .testTarget(
            name: "AppStoreRecordTests",
            dependencies: [
                "AppStoreRecord", .product(name: "X509", package: "swift-certificates"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "ShopLedgerTests", dependencies: ["ShopLedger", "AppStoreRecord", "ShopAPI", "StubServer", "StubCore"], swiftSettings: strict),
        .testTarget(
            name: "ShopProxyTests",
            dependencies: ["ShopProxy", "ProxyWire", "ProxyCA", "ShopAPI", "StubServer", "StubCore", "JSONTokens", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strict
        ),
        .testTarget(name: "ShopSettingsTests", dependencies: ["ShopSettings", "ShopAPI"], swiftSettings: strict),
        // The executable's own choices (`fail`'s exit statuses), through `@testable import reiterate_shop`.
        .testTarget(
            name: "ReiterateShopTests", dependencies: ["reiterate-shop", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ShopTUITests", dependencies: ["ShopTUI", "ShopViewModels", "ShopAPI", "ShopCompare", "StubCore", "TerminalText", "ShopLedger", "AppStoreRecord", "ShopProbes"],
            exclude: ["__Snapshots__"], swiftSettings: strict
        ),
        .testTarget(name: "ShopModelTests", dependencies: ["ShopModel"], swiftSettings: strict),
        .testTarget(name: "ShopProbesTests", dependencies: ["ShopProbes", "ShopViewModels", "ShopCompare", "ShopProxy", "ShopLedger", "ShopAPI", "StubServer", "StubCore", "AppStoreRecord", "JSONTokens", .product(name: "HTTPTypes", package: "swift-http-types")],
                    swiftSettings: strict),
        .testTarget(name: "ShopViewModelsTests", dependencies: ["ShopViewModels", "ShopModel", "ShopCache", "ShopAPI", "StubCore", "ShopCompare", "JSONTokens", "ShopLedger",
                                                         "AppStoreRecord"], swiftSettings: strict),
        // `make bench`: frame build and diff times (p50/p99) at three sizes, as JSON lines.
        .executableTarget(name: "tui-bench", dependencies: ["ShopTUI", "ShopViewModels", "ShopAPI"], path: "Tests/TUIBench", swiftSettings: strict),
        // Writes cache entries in a loop until killed: the crash-safety test SIGKILLs it mid-write.
        .executableTarget(name: "cache-write-probe", dependencies: ["ShopCache"], path: "Tests/CacheWriteProbe", swiftSettings: strict),
        // `make fuzz`: libFuzzer targets (built with -sanitize=fuzzer -D FUZZING); without them, programs
        // that replay the inputs they are given (`make test` replays Tests/Fuzz/corpus).
        .target(name: "FuzzReplay", path: "Tests/Fuzz/FuzzReplay", swiftSettings: strict),
        .executableTarget(name: "fuzz-json", dependencies: ["JSONTokens", "FuzzReplay"], path: "Tests/Fuzz/fuzz-json", swiftSettings: strict),
        .executableTarget(name: "fuzz-text", dependencies: ["TerminalText", "FuzzReplay"], path: "Tests/Fuzz/fuzz-text", swiftSettings: strict),
        .executableTarget(name: "fuzz-proxy", dependencies: ["ProxyWire", "FuzzReplay"], path: "Tests/Fuzz/fuzz-proxy", swiftSettings: strict),
        .executableTarget(name: "fuzz-config", dependencies: ["ShopSettings", "FuzzReplay"], path: "Tests/Fuzz/fuzz-config", swiftSettings: strict),
        .testTarget(
            name: "ShopAPITests",
            dependencies: [
                "ShopAPI", "ContractReader", "StubServer", "StubCore", "JSONTokens", .product(name: "Logging", package: "swift-log"),
                // Only to check the words users see for each failure.
                "ShopViewModels",
            ],
            swiftSettings: strict
        ),
    ]
)
