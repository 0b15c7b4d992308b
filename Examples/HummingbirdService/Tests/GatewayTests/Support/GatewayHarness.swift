import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Gateway
import Logging
import Lupine
import ServiceLifecycle
import Tracing

/// The gateway and its stand-in upstream, running on loopback on free ports, and a Lupine Session
/// to call the gateway with.
struct GatewayHarness: Sendable {
    let upstream: StandInUpstream
    let gateway: Gateway
    /// The gateway's base URL, `http://127.0.0.1:PORT`.
    let baseURL: String
    /// The tests' own client of the gateway.
    let client: Session

    struct ServerDidNotStart: Error {}

    static let logger = Logger(label: "gateway-tests")

    /// Runs the upstream and the gateway for the length of `body`, then shuts both down
    /// gracefully (the gateway's server, then its Session) and waits until they have stopped.
    ///
    /// - Parameters:
    ///   - tracer: A tracer bound (with `withTracer`) to the gateway: its server spans and its
    ///     Session's client spans go there.
    ///   - configure: Changes to the gateway's configuration.
    ///   - body: The test.
    /// - Returns: The harness, after everything has stopped.
    @discardableResult
    static func run(tracer: (any Tracer)? = nil,
                    configure: (inout GatewayConfiguration) -> Void = { _ in },
                    _ body: (GatewayHarness) async throws -> Void) async throws -> GatewayHarness {
        let upstream = StandInUpstream()
        let (upstreamPorts, upstreamPort) = AsyncStream.makeStream(of: Int.self)
        let upstreamGroup = ServiceGroup(configuration: .init(
            services: [upstream.application(logger: logger) { upstreamPort.yield($0) }],
            logger: logger))

        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { upstreamPort.finish() }
                try await upstreamGroup.run()
            }
            var upstreamIterator = upstreamPorts.makeAsyncIterator()
            guard let port = await upstreamIterator.next(), let upstreamURL = URL(string: "http://127.0.0.1:\(port)") else {
                try await group.waitForAll()
                throw ServerDidNotStart()
            }

            var configuration = GatewayConfiguration(port: 0,
                                                     upstreamURL: upstreamURL,
                                                     clientID: StandInUpstream.clientID,
                                                     clientSecret: StandInUpstream.clientSecret,
                                                     retryPolicy: RetryPolicy(exponentialBackoffScale: 0.01),
                                                     shutdownGracePeriod: .seconds(5))
            configure(&configuration)
            let (gatewayPorts, gatewayPort) = AsyncStream.makeStream(of: Int.self)
            // The Session picks up the tracer bound when it is made, and Hummingbird's
            // TracingMiddleware the one bound to the server's tasks.
            let startGateway = { (group: inout ThrowingTaskGroup<Void, any Error>) -> (Gateway, ServiceGroup) in
                let gateway = Gateway(configuration: configuration, logger: logger) { gatewayPort.yield($0) }
                let gatewayGroup = ServiceGroup(configuration: .init(services: [gateway.application], logger: logger))
                group.addTask {
                    defer { gatewayPort.finish() }
                    try await gatewayGroup.run()
                }
                return (gateway, gatewayGroup)
            }
            let (gateway, gatewayGroup) = if let tracer {
                withTracer(tracer) { startGateway(&group) }
            } else {
                startGateway(&group)
            }
            var gatewayIterator = gatewayPorts.makeAsyncIterator()
            guard let port = await gatewayIterator.next() else {
                await upstreamGroup.triggerGracefulShutdown()
                try await group.waitForAll()
                throw ServerDidNotStart()
            }

            let harness = GatewayHarness(upstream: upstream, gateway: gateway,
                                         baseURL: "http://127.0.0.1:\(port)", client: Session())
            let outcome: Result<Void, any Error>
            do {
                try await body(harness)
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            await harness.client.shutdown(gracePeriod: .seconds(1))
            await gatewayGroup.triggerGracefulShutdown()
            await upstreamGroup.triggerGracefulShutdown()
            try await group.waitForAll()
            try outcome.get()
            return harness
        }
    }

    /// Gets an item through the gateway.
    func item(_ id: String) async throws -> Item {
        try await client.request("\(baseURL)/items/\(id)").validate().serializingDecodable(Item.self).value
    }

    /// The status the gateway answers `path` with.
    func status(of path: String, headers: HTTPHeaders = [:]) async -> Int? {
        await client.request("\(baseURL)\(path)", headers: headers).serializingData().response.response?.statusCode
    }
}

/// Waits until `condition` holds, for at most `timeout`; returns whether it did.
func waitUntil(timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
