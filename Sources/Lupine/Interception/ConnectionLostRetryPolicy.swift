import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``RetryPolicy`` that retries only requests whose connection was lost
/// (`URLError.networkConnectionLost`), whatever the response status.
///
/// A connection can drop under a request through no fault of the request: a server closing an
/// idle keep-alive connection as the request goes out, a proxy restarting, a reset. This policy
/// sends such a request again, with the same limit and backoff as ``RetryPolicy``, and leaves
/// every other failure (including a 5xx status) to the caller.
///
/// ```swift
/// let session = Session(interceptor: .connectionLostRetryPolicy)
/// ```
open class ConnectionLostRetryPolicy: RetryPolicy, @unchecked Sendable {
    /// Creates a policy that retries only on `URLError.networkConnectionLost`.
    ///
    /// - Parameters:
    ///   - retryLimit: How many times a request is retried at most. `2` by default.
    ///   - exponentialBackoffBase: The base of the backoff, 2 or more (a smaller value is raised to 2). `2` by default.
    ///   - exponentialBackoffScale: Seconds the backoff is multiplied by. `0.5` by default.
    ///   - retryableHTTPMethods: Methods that may be retried. The idempotent ones by default.
    public init(retryLimit: UInt = RetryPolicy.defaultRetryLimit,
                exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
                exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
                retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods) {
        super.init(retryLimit: retryLimit,
                   exponentialBackoffBase: exponentialBackoffBase,
                   exponentialBackoffScale: exponentialBackoffScale,
                   retryableHTTPMethods: retryableHTTPMethods,
                   retryableHTTPStatusCodes: [],
                   retryableURLErrorCodes: [.networkConnectionLost])
    }
}

extension RequestInterceptor where Self == ConnectionLostRetryPolicy {
    /// A ``ConnectionLostRetryPolicy`` with every default.
    public static var connectionLostRetryPolicy: ConnectionLostRetryPolicy { ConnectionLostRetryPolicy() }

    /// A ``ConnectionLostRetryPolicy`` with the given settings.
    ///
    /// - Parameters:
    ///   - retryLimit: How many times a request is retried at most. `2` by default.
    ///   - exponentialBackoffBase: The base of the backoff, 2 or more (a smaller value is raised to 2). `2` by default.
    ///   - exponentialBackoffScale: Seconds the backoff is multiplied by. `0.5` by default.
    ///   - retryableHTTPMethods: Methods that may be retried. The idempotent ones by default.
    /// - Returns: The policy.
    public static func connectionLostRetryPolicy(retryLimit: UInt = RetryPolicy.defaultRetryLimit,
                                                 exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
                                                 exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
                                                 retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods) -> ConnectionLostRetryPolicy {
        ConnectionLostRetryPolicy(retryLimit: retryLimit,
                                  exponentialBackoffBase: exponentialBackoffBase,
                                  exponentialBackoffScale: exponentialBackoffScale,
                                  retryableHTTPMethods: retryableHTTPMethods)
    }
}
