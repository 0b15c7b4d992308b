import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Closure signature of an adapter.
public typealias AdaptHandler = @Sendable (_ request: URLRequest,
                                           _ session: Session,
                                           _ completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) -> Void
/// Closure signature of a retrier.
public typealias RetryHandler = @Sendable (_ request: Request,
                                           _ session: Session,
                                           _ error: any Error,
                                           _ completion: @escaping @Sendable (RetryResult) -> Void) -> Void

/// An ordered composition of adapters and retriers.
///
/// Adapters run in order, each receiving the previous one's output; the first failure stops the
/// chain. Retriers are asked in order; the first answer other than `.doNotRetry` wins.
open class Interceptor: @unchecked Sendable, RequestInterceptor {
    /// The adapters, in the order they run.
    public let adapters: [any RequestAdapter]
    /// The retriers, in the order they are asked.
    public let retriers: [any RequestRetrier]

    /// Composes one closure adapter and one closure retrier.
    public init(adaptHandler: @escaping AdaptHandler, retryHandler: @escaping RetryHandler) {
        adapters = [Adapter(adaptHandler)]
        retriers = [Retrier(retryHandler)]
    }

    /// Composes one adapter and one retrier.
    public init(adapter: any RequestAdapter, retrier: any RequestRetrier) {
        adapters = [adapter]
        retriers = [retrier]
    }

    /// Composes `adapters + interceptors` and `retriers + interceptors`.
    public init(adapters: [any RequestAdapter] = [],
                retriers: [any RequestRetrier] = [],
                interceptors: [any RequestInterceptor] = []) {
        self.adapters = adapters + interceptors
        self.retriers = retriers + interceptors
    }

    /// Runs the adapters in order through `adapt(_:for:completion:)`.
    @preconcurrency
    open func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        Self.chain(adapters[...], urlRequest, completion: completion) { adapter, request, next in
            adapter.adapt(request, for: session, completion: next)
        }
    }

    /// Runs the adapters in order through `adapt(_:using:completion:)`.
    @preconcurrency
    open func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        Self.chain(adapters[...], urlRequest, completion: completion) { adapter, request, next in
            adapter.adapt(request, using: state, completion: next)
        }
    }

    /// Asks the retriers in order; the first answer other than `.doNotRetry` is the answer.
    @preconcurrency
    open func retry(_ request: Request,
                    for session: Session,
                    dueTo error: any Error,
                    completion: @escaping @Sendable (RetryResult) -> Void) {
        Self.askRetriers(retriers[...], request, session, error, completion)
    }

    private static func chain(_ adapters: ArraySlice<any RequestAdapter>,
                              _ urlRequest: URLRequest,
                              completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void,
                              step: @escaping @Sendable (any RequestAdapter, URLRequest, @escaping @Sendable (Result<URLRequest, any Error>) -> Void) -> Void) {
        guard let adapter = adapters.first else {
            completion(.success(urlRequest))
            return
        }
        let rest = adapters.dropFirst()
        step(adapter, urlRequest) { result in
            switch result {
            case let .success(adapted): chain(rest, adapted, completion: completion, step: step)
            case .failure: completion(result)
            }
        }
    }

    private static func askRetriers(_ retriers: ArraySlice<any RequestRetrier>,
                                    _ request: Request,
                                    _ session: Session,
                                    _ error: any Error,
                                    _ completion: @escaping @Sendable (RetryResult) -> Void) {
        guard let retrier = retriers.first else {
            completion(.doNotRetry)
            return
        }
        let rest = retriers.dropFirst()
        retrier.retry(request, for: session, dueTo: error) { result in
            if case .doNotRetry = result {
                askRetriers(rest, request, session, error, completion)
            } else {
                completion(result)
            }
        }
    }
}

/// An adapter made from a closure.
open class Adapter: @unchecked Sendable, RequestInterceptor {
    private let adaptHandler: AdaptHandler

    /// Wraps `adaptHandler`.
    @preconcurrency
    public init(_ adaptHandler: @escaping AdaptHandler) {
        self.adaptHandler = adaptHandler
    }

    /// Calls the closure.
    @preconcurrency
    open func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        adaptHandler(urlRequest, session, completion)
    }

    /// Calls the closure with `state.session`.
    @preconcurrency
    open func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        adaptHandler(urlRequest, state.session, completion)
    }
}

/// A retrier made from a closure.
open class Retrier: @unchecked Sendable, RequestInterceptor {
    private let retryHandler: RetryHandler

    /// Wraps `retryHandler`.
    @preconcurrency
    public init(_ retryHandler: @escaping RetryHandler) {
        self.retryHandler = retryHandler
    }

    /// Calls the closure.
    @preconcurrency
    open func retry(_ request: Request,
                    for session: Session,
                    dueTo error: any Error,
                    completion: @escaping @Sendable (RetryResult) -> Void) {
        retryHandler(request, session, error, completion)
    }
}

extension RequestAdapter where Self == Adapter {
    /// An `Adapter` from a closure.
    @preconcurrency
    public static func adapter(using closure: @escaping AdaptHandler) -> Adapter {
        Adapter(closure)
    }
}

extension RequestRetrier where Self == Retrier {
    /// A `Retrier` from a closure.
    @preconcurrency
    public static func retrier(using closure: @escaping RetryHandler) -> Retrier {
        Retrier(closure)
    }
}

extension RequestInterceptor where Self == Interceptor {
    /// An `Interceptor` from an adapt closure and a retry closure.
    @preconcurrency
    public static func interceptor(adapter: @escaping AdaptHandler, retrier: @escaping RetryHandler) -> Interceptor {
        Interceptor(adaptHandler: adapter, retryHandler: retrier)
    }

    /// An `Interceptor` from one adapter and one retrier.
    @preconcurrency
    public static func interceptor(adapter: any RequestAdapter, retrier: any RequestRetrier) -> Interceptor {
        Interceptor(adapter: adapter, retrier: retrier)
    }

    /// An `Interceptor` from lists of adapters, retriers and interceptors.
    @preconcurrency
    public static func interceptor(adapters: [any RequestAdapter] = [],
                                   retriers: [any RequestRetrier] = [],
                                   interceptors: [any RequestInterceptor] = []) -> Interceptor {
        Interceptor(adapters: adapters, retriers: retriers, interceptors: interceptors)
    }
}
