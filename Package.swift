// swift-tools-version: 6.2
import PackageDescription

// The ThreadSanitizer build: `LUPINE_TSAN=1 swift build --sanitize=thread ...` (README,
// "ThreadSanitizer"). On Linux `Synchronization.Mutex` is a futex that TSan cannot see, so under
// TSan every access to state it guards looks like a race. In this build our own targets get the
// define LUPINE_TSAN, under which each declares a `Mutex` of its own (their Mutex.swift) that
// shadows Synchronization's: a pthread lock from LupineSanitizerSupport. LupineCLITests is the one
// test target with a Mutex of its own. Every other build is untouched and does not even list
// that target.
let sanitizerBuild = Context.environment["LUPINE_TSAN"] == "1"
let sanitizerDependencies: [Target.Dependency] = sanitizerBuild ? ["LupineSanitizerSupport"] : []
let sanitizerSettings: [SwiftSetting] = sanitizerBuild ? [.define("LUPINE_TSAN")] : []
let sanitizerTargets: [Target] = sanitizerBuild ? [
    .target(
        name: "LupineSanitizerSupport",
        dependencies: [.product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
    ),
] : []

let package = Package(
    name: "Lupine",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "Lupine", targets: ["Lupine"]),
        .library(name: "LupineTestServer", targets: ["LupineTestServer"]),
        .executable(name: "lupine", targets: ["LupineCLI"]),
        .library(name: "LupineOpenAPI", targets: ["LupineOpenAPI"]),
        .library(name: "LupineServiceLifecycle", targets: ["LupineServiceLifecycle"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // Only for `swift package generate-documentation`; nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "Lupine",
            dependencies: [
                "CLupineZlib",
                "CLupineCodecs",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                // Small packages with no dependencies of their own: every request can be traced
                // and measured without the user wiring a middleware (see TracingEventMonitor).
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Metrics", package: "swift-metrics"),
            ] + sanitizerDependencies,
            swiftSettings: sanitizerSettings
        ),
        .systemLibrary(
            name: "CLupineZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Brotli and zstd, opened at run time with dlopen through declarations of our own: building
        // needs neither library's headers, and a process without a library neither advertises nor
        // decodes its coding (see the "Content codings" article).
        .target(
            name: "CLupineCodecs",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        .target(
            name: "LupineTestServer",
            dependencies: [
                "CLupineZlib",
                "CLupineCodecs",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ] + sanitizerDependencies,
            swiftSettings: sanitizerSettings
        ),
        .executableTarget(
            name: "LupineCLI",
            dependencies: [
                "Lupine",
                "LupineTestServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ] + sanitizerDependencies,
            swiftSettings: sanitizerSettings
        ),
        .testTarget(
            name: "LupineTests",
            dependencies: [
                "Lupine",
                "LupineTestServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            resources: [.copy("Resources/TLS")]
        ),
        // Code written as Alamofire's users write it, built in the Swift 5 language mode as
        // Alamofire's own tests are: it must compile against Lupine unchanged, and run.
        .testTarget(
            name: "LupineSwift5ModeTests",
            dependencies: ["Lupine", "LupineTestServer"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Runs the built `lupine` executable as a subprocess; depending on its target makes
        // `swift test` build it.
        .testTarget(
            name: "LupineCLITests",
            dependencies: [
                "LupineCLI",
                "Lupine",
                "LupineTestServer",
            ] + sanitizerDependencies,
            swiftSettings: sanitizerSettings
        ),
        // Integrations with other server-side packages, each in a small target of its own so that
        // the core library does not carry their dependencies.
        .target(
            name: "LupineOpenAPI",
            dependencies: [
                "Lupine",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ] + sanitizerDependencies,
            swiftSettings: sanitizerSettings
        ),
        .target(
            name: "LupineServiceLifecycle",
            dependencies: [
                "Lupine",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "LupineEcosystemTests",
            dependencies: [
                "Lupine",
                "LupineOpenAPI",
                "LupineServiceLifecycle",
                "LupineTestServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ] + sanitizerTargets
)
