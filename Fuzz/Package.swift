// swift-tools-version: 6.2
import PackageDescription

/// libFuzzer targets for the parts of Lupine that read untrusted bytes or input. A separate package,
/// so `swift test` never builds it; run through `Fuzz/run.sh`, which builds every target with
/// `-sanitize=fuzzer,address` and `-enable-testing` (the targets reach Lupine's internal parsers
/// with `@testable import`, so Lupine needs no fuzzing-only public API).
let fuzzTargets = ["FuzzFormEncoding", "FuzzMultipart", "FuzzHeaders", "FuzzCookies", "FuzzResumeData",
                   "FuzzServerSentEvents"]

let package = Package(
    name: "LupineFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Lupine", path: ".."),
    ],
    targets: [
        .target(name: "CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"]),
    ] + fuzzTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                "FuzzSupport",
                .product(name: "Lupine", package: "Lupine"),
                .product(name: "LupineTestServer", package: "Lupine"),
            ]
        )
    }
)
