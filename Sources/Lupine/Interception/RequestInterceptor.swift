import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an adapter knows about the request it adapts.
public struct RequestAdapterState: Sendable {
    /// `Request.id` of the request being adapted.
    public let requestID: UUID
    /// The Session that owns the request.
    public let session: Session
}

/// Rewrites a URLRequest before it is sent (adds a token, a header, a signature...).
public protocol RequestAdapter: Sendable {
    /// Calls `completion` with the adapted request or the error that stops it.
    func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void)

    /// The variant Session calls; by default it forwards to `adapt(_:for:completion:)`.
    func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState, completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void)
}

extension RequestAdapter {
    /// Forwards to `adapt(_:for:completion:)` with `state.session`.
    @preconcurrency
    public func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState, completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void) {
        adapt(urlRequest, for: state.session, completion: completion)
    }
}

/// What a retrier decides about a failed request.
public enum RetryResult: Sendable {
    /// Retry now.
    case retry
    /// Retry after this many seconds.
    case retryWithDelay(TimeInterval)
    /// Finish with the current error.
    case doNotRetry
    /// Finish with `AFError.requestRetryFailed(retryError:originalError:)`.
    case doNotRetryWithError(any Error)
}

extension RetryResult {
    var retryRequired: Bool {
        switch self {
        case .retry, .retryWithDelay: true
        default: false
        }
    }

    var delay: TimeInterval? {
        if case let .retryWithDelay(delay) = self { return delay }
        return nil
    }

    var error: (any Error)? {
        if case let .doNotRetryWithError(error) = self { return error }
        return nil
    }
}

/// Decides whether a failed request is sent again.
public protocol RequestRetrier: Sendable {
    /// Calls `completion` with the decision for `request`, which failed with `error`.
    func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void)
}

/// An adapter and a retrier in one.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Default: passes the request through unchanged.
    @preconcurrency
    public func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        completion(.success(urlRequest))
    }

    /// Default: `.doNotRetry`.
    @preconcurrency
    public func retry(_ request: Request,
                      for session: Session,
                      dueTo error: any Error,
                      completion: @escaping @Sendable (RetryResult) -> Void) {
        completion(.doNotRetry)
    }
}
