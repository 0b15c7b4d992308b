import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Lupine

/// The gateway's client of the upstream API: one Lupine `Session` for every call, with
/// - the configuration's `RetryPolicy` as the Session's interceptor (503s, timeouts and lost
///   connections are retried with a backoff);
/// - an `AuthenticationInterceptor` passed with each request, which gets a token before the first
///   call, refreshes it before it expires, and refreshes it and retries once when the upstream
///   answers 401;
/// - the HTTP cache in memory, so that responses the upstream marks fresh are served without a
///   call;
/// - logs of every call through swift-log (`LoggingEventMonitor`), and a client span per call when
///   a tracer is bootstrapped (or bound with `withTracer`) before the client is made.
///
/// Lupine runs the validations, the interceptors and the decoding of a call off the event loops it
/// shares with Hummingbird, so a slow check never holds up the gateway's own routes.
public final class UpstreamClient: Sendable {
    /// The Session every upstream call goes through. Shut it down with the service: the gateway's
    /// `Application` runs a `SessionService` for it.
    public let session: Session
    private let authentication: AuthenticationInterceptor<UpstreamAuthenticator>
    private let baseURL: URL
    private let responseCheck: DataRequest.Validation?

    /// Creates the client and its Session.
    ///
    /// - Parameters:
    ///   - configuration: The upstream's URL, credentials, retry policy and cache size.
    ///   - logger: Where `LoggingEventMonitor` writes a line per upstream exchange, at `.debug`:
    ///     request line, status, duration and body size, credentials masked.
    public init(configuration: GatewayConfiguration, logger: Logger) {
        let sessionConfiguration = URLSessionConfiguration.af.default
        // Memory only: the gateway writes no cache files.
        sessionConfiguration.urlCache = URLCache(memoryCapacity: configuration.cacheMemoryCapacity,
                                                 diskCapacity: 0,
                                                 diskPath: nil)
        sessionConfiguration.timeoutIntervalForRequest = 10
        sessionConfiguration.timeoutIntervalForResource = 30
        session = Session(configuration: sessionConfiguration,
                          interceptor: configuration.retryPolicy,
                          eventMonitors: [LoggingEventMonitor(logger: logger, level: .debug)])
        let authenticator = UpstreamAuthenticator(tokenURL: configuration.upstreamURL.appending(path: "oauth/token"),
                                                  clientID: configuration.clientID,
                                                  clientSecret: configuration.clientSecret)
        authentication = AuthenticationInterceptor(authenticator: authenticator, credential: .initial)
        baseURL = configuration.upstreamURL
        responseCheck = configuration.responseCheck
    }

    /// Gets an item from the upstream's `GET /items/{id}`.
    ///
    /// - Parameter id: The item's id.
    /// - Returns: The item.
    /// - Throws: The call's `AFError`: `.responseValidationFailed` for a status outside 200..<300
    ///   (after the retries) or a body that is not JSON, `.sessionTaskFailed` when the upstream
    ///   cannot be reached, `.sessionInvalidated` once the Session is shut down.
    public func item(id: String) async throws(AFError) -> Item {
        var request = session.request(baseURL.appending(path: "items").appending(path: id),
                                      interceptor: authentication)
            .validate(statusCode: 200..<300)
            .validate(contentType: ["application/json"])
        if let responseCheck {
            request = request.validate(responseCheck)
        }
        return try await request.serializingDecodable(Item.self).result.get()
    }
}
