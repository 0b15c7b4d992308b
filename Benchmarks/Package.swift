// swift-tools-version: 6.1
import PackageDescription

// Lupine side by side with raw AsyncHTTPClient and URLSession, against a server in another process
// (`lupine serve`, started by compare.sh). A package of its own, so `swift test` never builds it.
let package = Package(
    name: "LupineBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Lupine", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // The clients and the scenarios, shared by the benchmark and bench-profile.
        .target(
            name: "BenchmarkClients",
            dependencies: [
                .product(name: "Lupine", package: "Lupine"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // AHC's TLS configuration for S9 (the benchmark's certificate as its root).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // One scenario with one client outside the harness: for callgrind/perf, context switches
        // per request and the connections opened.
        .executableTarget(
            name: "bench-profile",
            dependencies: ["BenchmarkClients", .product(name: "NIOPosix", package: "swift-nio")]
        ),
        .executableTarget(
            name: "HTTPClients",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkClients",
            ],
            path: "Benchmarks/HTTPClients",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
    ]
)
