import Foundation
import Gateway
import Hummingbird
import Logging

// The gateway as a process. Configured from the environment:
//   PORT (8080), HOST (127.0.0.1), UPSTREAM_URL (http://127.0.0.1:8081),
//   UPSTREAM_CLIENT_ID (gateway), UPSTREAM_CLIENT_SECRET (empty), LOG_LEVEL (info).
//
// Tracing and metrics: bootstrap your backends here, before the Gateway makes its Session
// (`InstrumentationSystem.bootstrap(...)`, `MetricsSystem.bootstrap(...)`). The Session then
// traces and measures every upstream call, and Hummingbird's middleware every incoming request.

let environment = ProcessInfo.processInfo.environment
var logger = Logger(label: "gateway")
logger.logLevel = environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info

guard let upstreamURL = URL(string: environment["UPSTREAM_URL"] ?? "http://127.0.0.1:8081") else {
    logger.critical("UPSTREAM_URL is not a URL")
    exit(64)
}
let configuration = GatewayConfiguration(host: environment["HOST"] ?? "127.0.0.1",
                                         port: environment["PORT"].flatMap { Int($0) } ?? 8080,
                                         upstreamURL: upstreamURL,
                                         clientID: environment["UPSTREAM_CLIENT_ID"] ?? "gateway",
                                         clientSecret: environment["UPSTREAM_CLIENT_SECRET"] ?? "")
let gateway = Gateway(configuration: configuration, logger: logger)
// Runs until SIGTERM or SIGINT, then shuts down gracefully: the server, then the Session.
try await gateway.application.runService()
