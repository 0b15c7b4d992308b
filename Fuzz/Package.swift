// swift-tools-version: 6.2
import PackageDescription

/// libFuzzer targets for the parts of Lupine that read untrusted bytes or input. A separate package,
/// so `swift test` never builds it; run through `Fuzz/run.sh`, which builds every target with
/// `-sanitize=fuzzer,address` and `-enable-testing` (the targets reach Lupine's internal parsers
/// with `@testable import`, so Lupine needs no fuzzing-only public API).
/// One target per content decoder, sharing FuzzDecoderSupport.
let decoderFuzzTargets = ["FuzzGzipDecoder", "FuzzDeflateDecoder", "FuzzBrotliDecoder", "FuzzZstdDecoder"]
let fuzzTargets = ["FuzzFormEncoding", "FuzzMultipart", "FuzzHeaders", "FuzzCookies", "FuzzResumeData",
                   "FuzzServerSentEvents", "FuzzWebSocketFrames", "FuzzDigestChallenge", "FuzzProxyEnvironment",
                   "FuzzCacheRules", "FuzzURLProtocolClient", "FuzzHTTP1Response"] + decoderFuzzTargets

let package = Package(
    name: "LupineFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Lupine", path: ".."),
        // The versions Lupine itself resolves: the engine targets drive SwiftNIO handlers directly.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .target(name: "CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"]),
        .target(
            name: "FuzzDecoderSupport",
            dependencies: [
                "FuzzSupport",
                .product(name: "Lupine", package: "Lupine"),
                .product(name: "LupineTestServer", package: "Lupine"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ] + fuzzTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: (decoderFuzzTargets.contains(name) ? ["FuzzDecoderSupport"] : []) + [
                "FuzzSupport",
                .product(name: "Lupine", package: "Lupine"),
                .product(name: "LupineTestServer", package: "Lupine"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        )
    }
)
