import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A retrier that sends a failed request again, with exponential backoff, when the failure looks
/// transient: a retryable status code or a retryable `URLError` code, on a method that is safe to
/// send twice.
///
/// With the defaults, a failed idempotent request is retried at most twice, 0.5 s and then 1.0 s
/// after each failure. The n-th retry (counting from zero) waits
/// `pow(exponentialBackoffBase, n) * exponentialBackoffScale` seconds; the wait goes through the
/// Session and blocks no thread.
///
/// ```swift
/// let session = Session(interceptor: RetryPolicy(retryLimit: 3))
/// session.request("https://example.com/items").validate().responseData { response in
///     print(response.result)
/// }
/// ```
///
/// The status code is read from `Request.response`, which exists once the server answered, so a
/// retryable status is noticed only when a validator turns it into an error (`validate()`). A
/// transport failure is recognised by its `URLError` code, which Lupine reports inside
/// `AFError.sessionTaskFailed(error:)` exactly as URLSession would.
///
/// Subclass and override ``shouldRetry(request:dueTo:)`` to change which failures are retried.
open class RetryPolicy: @unchecked Sendable, RequestInterceptor {
    /// How many times a request is retried by default: 2.
    public static let defaultRetryLimit: UInt = 2

    /// The default base of the exponential backoff: 2.
    public static let defaultExponentialBackoffBase: UInt = 2

    /// The default number of seconds the exponential backoff is multiplied by: 0.5.
    public static let defaultExponentialBackoffScale: Double = 0.5

    /// The methods retried by default: the idempotent ones (`DELETE`, `GET`, `HEAD`, `OPTIONS`,
    /// `PUT`, `TRACE`). `POST`, `PATCH` and `CONNECT` are never retried unless asked for, because
    /// sending them twice can repeat their effect.
    public static let defaultRetryableHTTPMethods: Set<HTTPMethod> = [
        .delete, .get, .head, .options, .put, .trace,
    ]

    /// The status codes retried by default: 408 (Request Timeout), 500 (Internal Server Error),
    /// 502 (Bad Gateway), 503 (Service Unavailable) and 504 (Gateway Timeout).
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 500, 502, 503, 504]

    /// The `URLError` codes retried by default: failures of the connection, of name resolution,
    /// of the TLS handshake, timeouts and lost connectivity, which a later attempt may not meet.
    ///
    /// Errors about the request itself (a bad URL, a cancellation, a body that cannot be sent
    /// again) are left out: sending the same request again would fail the same way.
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .backgroundSessionInUseByAnotherProcess,
        .backgroundSessionWasDisconnected,
        .badServerResponse,
        .callIsActive,
        .cannotConnectToHost,
        .cannotFindHost,
        .cannotLoadFromNetwork,
        .dataNotAllowed,
        .dnsLookupFailed,
        .downloadDecodingFailedMidStream,
        .downloadDecodingFailedToComplete,
        .internationalRoamingOff,
        .networkConnectionLost,
        .notConnectedToInternet,
        .secureConnectionFailed,
        .serverCertificateHasBadDate,
        .serverCertificateNotYetValid,
        .timedOut,
    ]

    /// The largest number of retries of one request; once `Request.retryCount` reaches it, the
    /// request finishes with its error.
    public let retryLimit: UInt

    /// The base of the exponential backoff; at least 2.
    public let exponentialBackoffBase: UInt

    /// The number of seconds the exponential backoff is multiplied by.
    public let exponentialBackoffScale: Double

    /// The methods that may be retried; a request with any other method never is.
    public let retryableHTTPMethods: Set<HTTPMethod>

    /// The response status codes that make a request worth retrying.
    public let retryableHTTPStatusCodes: Set<Int>

    /// The `URLError` codes that make a request worth retrying.
    public let retryableURLErrorCodes: Set<URLError.Code>

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - retryLimit: How many times a request is retried at most. `2` by default.
    ///   - exponentialBackoffBase: The base of the backoff, 2 or more; a smaller value is raised to 2
    ///     (Alamofire traps instead: Lupine never crashes on API misuse). `2` by default.
    ///   - exponentialBackoffScale: Seconds the backoff is multiplied by. `0.5` by default.
    ///   - retryableHTTPMethods: Methods that may be retried. The idempotent ones by default.
    ///   - retryableHTTPStatusCodes: Status codes that are retried. 408, 500, 502, 503 and 504 by default.
    ///   - retryableURLErrorCodes: `URLError` codes that are retried.
    ///     ``defaultRetryableURLErrorCodes`` by default.
    public init(retryLimit: UInt = RetryPolicy.defaultRetryLimit,
                exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
                exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
                retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
                retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
                retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes) {
        self.retryLimit = retryLimit
        // A base of 0 or 1 would make the backoff zero or constant.
        self.exponentialBackoffBase = max(exponentialBackoffBase, 2)
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableURLErrorCodes = retryableURLErrorCodes
    }

    /// Decides whether `request` is sent again after failing with `error`.
    ///
    /// While `Request.retryCount` is below ``retryLimit`` and ``shouldRetry(request:dueTo:)``
    /// agrees, the answer is `.retryWithDelay` with the backoff for this retry
    /// (`pow(exponentialBackoffBase, retryCount) * exponentialBackoffScale` seconds); otherwise it
    /// is `.doNotRetry`. `completion` is called at once, on the calling thread.
    ///
    /// - Parameters:
    ///   - request: The request that failed; its `request`, `response` and `retryCount` describe
    ///     the failed attempt.
    ///   - session: The Session that owns `request`.
    ///   - error: The error the attempt failed with.
    ///   - completion: Receives the decision.
    @preconcurrency
    open func retry(_ request: Request,
                    for session: Session,
                    dueTo error: any Error,
                    completion: @escaping @Sendable (RetryResult) -> Void) {
        let retryCount = request.retryCount
        guard retryCount < retryLimit, shouldRetry(request: request, dueTo: error) else {
            completion(.doNotRetry)
            return
        }
        completion(.retryWithDelay(backoff(forRetry: retryCount)))
    }

    /// Whether the failure of `request` with `error` is one this policy retries, leaving the
    /// retry limit aside.
    ///
    /// The method of `request.request` must be in ``retryableHTTPMethods``. Then the request is
    /// retried when its response status is in ``retryableHTTPStatusCodes``, or else when the
    /// `URLError` code of `error` (or of the error an `AFError` wraps, such as
    /// `.sessionTaskFailed(error:)`) is in ``retryableURLErrorCodes``.
    ///
    /// - Parameters:
    ///   - request: The request that failed.
    ///   - error: The error it failed with.
    /// - Returns: `true` when the request should be sent again.
    open func shouldRetry(request: Request, dueTo error: any Error) -> Bool {
        guard let method = request.request?.method, retryableHTTPMethods.contains(method) else { return false }
        if let statusCode = request.response?.statusCode, retryableHTTPStatusCodes.contains(statusCode) {
            return true
        }
        let code = (error as? URLError)?.code ?? (error.asAFError?.underlyingError as? URLError)?.code
        guard let code else { return false }
        return retryableURLErrorCodes.contains(code)
    }

    /// Seconds to wait before the retry that follows attempt number `retryCount` (from zero).
    private func backoff(forRetry retryCount: Int) -> TimeInterval {
        pow(Double(exponentialBackoffBase), Double(retryCount)) * exponentialBackoffScale
    }
}

extension RequestInterceptor where Self == RetryPolicy {
    /// A ``RetryPolicy`` with every default.
    public static var retryPolicy: RetryPolicy { RetryPolicy() }

    /// A ``RetryPolicy`` with the given settings.
    ///
    /// - Parameters:
    ///   - retryLimit: How many times a request is retried at most. `2` by default.
    ///   - exponentialBackoffBase: The base of the backoff, 2 or more; a smaller value is raised to 2
    ///     (Alamofire traps instead: Lupine never crashes on API misuse). `2` by default.
    ///   - exponentialBackoffScale: Seconds the backoff is multiplied by. `0.5` by default.
    ///   - retryableHTTPMethods: Methods that may be retried. The idempotent ones by default.
    ///   - retryableHTTPStatusCodes: Status codes that are retried. 408, 500, 502, 503 and 504 by default.
    ///   - retryableURLErrorCodes: `URLError` codes that are retried.
    ///     ``RetryPolicy/defaultRetryableURLErrorCodes`` by default.
    /// - Returns: The policy.
    public static func retryPolicy(retryLimit: UInt = RetryPolicy.defaultRetryLimit,
                                   exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
                                   exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
                                   retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
                                   retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
                                   retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes) -> RetryPolicy {
        RetryPolicy(retryLimit: retryLimit,
                    exponentialBackoffBase: exponentialBackoffBase,
                    exponentialBackoffScale: exponentialBackoffScale,
                    retryableHTTPMethods: retryableHTTPMethods,
                    retryableHTTPStatusCodes: retryableHTTPStatusCodes,
                    retryableURLErrorCodes: retryableURLErrorCodes)
    }
}
