import Foundation
import Hummingbird
import Logging
import Lupine
import LupineServiceLifecycle

/// The gateway service: a Hummingbird application with routes of its own (`GET /health`) and
/// routes answered from the upstream API (`GET /items/{id}`), and the Lupine client it calls that
/// API with.
///
/// ```swift
/// let gateway = Gateway(configuration: configuration, logger: logger)
/// try await gateway.application.runService()   // until SIGTERM or SIGINT
/// ```
///
/// The application runs a `SessionService` beside its server, so a graceful shutdown stops the
/// server first, then gives the upstream calls still running the configuration's grace period
/// before the Session closes its connections.
public struct Gateway: Sendable {
    /// The client of the upstream API.
    public let upstream: UpstreamClient
    /// The Hummingbird application; a `Service`, so it runs on its own (`runService()`) or in a
    /// `ServiceGroup` of yours.
    public let application: Application<RouterResponder<BasicRequestContext>>

    /// Creates the gateway.
    ///
    /// - Parameters:
    ///   - configuration: Where the gateway listens and how it calls the upstream.
    ///   - logger: The logger of the server and of the upstream calls.
    ///   - onServerRunning: Called with the port once the server listens (useful with port 0).
    public init(configuration: GatewayConfiguration,
                logger: Logger,
                onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) {
        let upstream = UpstreamClient(configuration: configuration, logger: logger)
        self.upstream = upstream
        application = Application(
            router: Self.router(upstream: upstream),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port),
                                 serverName: "gateway"),
            services: [SessionService(session: upstream.session, gracePeriod: configuration.shutdownGracePeriod)],
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// The gateway's routes, each logged, measured and traced (a server span per request, the
    /// parent of the client spans of the upstream calls it makes).
    static func router(upstream: UpstreamClient) -> Router<BasicRequestContext> {
        let router = Router()
        router.addMiddleware {
            LogRequestsMiddleware(.debug)
            MetricsMiddleware()
            TracingMiddleware()
        }
        router.get("health") { _, _ in
            "ok"
        }
        router.get("items/:id") { _, context -> Item in
            let id = try context.parameters.require("id")
            do throws(AFError) {
                return try await upstream.item(id: id)
            } catch {
                throw Self.gatewayError(for: error, logger: context.logger)
            }
        }
        return router
    }

    /// What the gateway's caller sees of a failed upstream call: the upstream's 404 as a 404,
    /// anything else as 502 Bad Gateway.
    static func gatewayError(for error: AFError, logger: Logger) -> HTTPError {
        if error.responseCode == 404 {
            return HTTPError(.notFound)
        }
        logger.warning("upstream call failed", metadata: ["error": "\(error.localizedDescription)"])
        return HTTPError(.badGateway, message: "The upstream API did not answer as expected.")
    }
}
