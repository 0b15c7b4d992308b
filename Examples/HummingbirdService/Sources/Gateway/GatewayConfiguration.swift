import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine

/// What the gateway needs to know: where it listens, where its upstream API is, and how it calls
/// that API.
public struct GatewayConfiguration: Sendable {
    /// The address the gateway's HTTP server binds to.
    public var host: String
    /// The port the gateway listens on; 0 picks a free one (see `onServerRunning`).
    public var port: Int
    /// The upstream API's base URL, such as `http://127.0.0.1:8081`.
    public var upstreamURL: URL
    /// The client id sent, with `clientSecret`, to the upstream's token endpoint.
    public var clientID: String
    /// The client secret sent to the upstream's token endpoint.
    public var clientSecret: String
    /// How failed upstream calls are retried: 503s, timeouts and lost connections of idempotent
    /// requests, with an exponential backoff.
    public var retryPolicy: RetryPolicy
    /// The memory the HTTP cache may use for upstream responses. Nothing is written to disk.
    public var cacheMemoryCapacity: Int
    /// How long upstream calls still running at shutdown may take to finish.
    public var shutdownGracePeriod: Duration
    /// A check of each upstream response besides its status and content type, run by Lupine
    /// where it runs every validation: never on an event loop. Nil for none.
    public var responseCheck: DataRequest.Validation?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - host: The address to bind to; loopback by default.
    ///   - port: The port to listen on; 8080 by default, 0 for a free one.
    ///   - upstreamURL: The upstream API's base URL.
    ///   - clientID: The client id for the upstream's token endpoint.
    ///   - clientSecret: The client secret for the upstream's token endpoint.
    ///   - retryPolicy: The retry policy of upstream calls; two retries after 0.5 s and 1 s by
    ///     default.
    ///   - cacheMemoryCapacity: The HTTP cache's memory; 8 MiB by default.
    ///   - shutdownGracePeriod: The grace period of upstream calls at shutdown; 10 s by default.
    ///   - responseCheck: An extra check of each upstream response; none by default.
    public init(host: String = "127.0.0.1",
                port: Int = 8080,
                upstreamURL: URL,
                clientID: String,
                clientSecret: String,
                retryPolicy: RetryPolicy = RetryPolicy(),
                cacheMemoryCapacity: Int = 8 << 20,
                shutdownGracePeriod: Duration = .seconds(10),
                responseCheck: DataRequest.Validation? = nil) {
        self.host = host
        self.port = port
        self.upstreamURL = upstreamURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.retryPolicy = retryPolicy
        self.cacheMemoryCapacity = cacheMemoryCapacity
        self.shutdownGracePeriod = shutdownGracePeriod
        self.responseCheck = responseCheck
    }
}
