// swift-tools-version: 6.2
import PackageDescription

// A Hummingbird 2 service that calls an upstream API through a Lupine Session: retries, token
// refresh, the HTTP cache and tracing, with the Session shut down by the service's own
// ServiceGroup. A package of its own, built and tested by .ci/run after the main suite.
let package = Package(
    name: "HummingbirdService",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gateway", targets: ["GatewayServer"]),
    ],
    dependencies: [
        .package(name: "Lupine", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // The service: its routes, and the client of the upstream API.
        .target(
            name: "Gateway",
            dependencies: [
                .product(name: "Lupine", package: "Lupine"),
                .product(name: "LupineServiceLifecycle", package: "Lupine"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // `swift run gateway`: the service as a process, configured from the environment.
        .executableTarget(
            name: "GatewayServer",
            dependencies: [
                "Gateway",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The service and a stand-in upstream (a Hummingbird app of its own), both on loopback.
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway",
                .product(name: "Lupine", package: "Lupine"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ]
)
