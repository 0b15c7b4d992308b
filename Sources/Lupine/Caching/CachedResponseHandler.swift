import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides whether, and in what form, a response is stored in the Session's `URLCache`.
///
/// Lupine asks it once per response that RFC 9111 lets it store (a complete response to a GET of
/// a `DataRequest`, without `no-store`). `completion(response)` stores that response (possibly
/// modified); `completion(nil)` stores nothing. The request-level handler takes precedence over
/// the Session's; with neither, the proposed response is stored.
public protocol CachedResponseHandler: Sendable {
    /// - Parameters:
    ///   - task: A task describing the exchange that produced the response (its request and
    ///     response); Lupine runs no URLSession, so it is a description, not a real task.
    ///   - response: The response Lupine proposes to store.
    ///   - completion: Call once, from any thread, with the response to store or nil. It is
    ///     stored when it is called; the request does not wait for it.
    func dataTask(_ task: URLSessionDataTask,
                  willCacheResponse response: CachedURLResponse,
                  completion: @escaping (CachedURLResponse?) -> Void)
}

/// A ready-made `CachedResponseHandler`: cache, don't cache, or modify.
public struct ResponseCacher {
    /// What to do with a response about to be stored.
    public enum Behavior: Sendable {
        /// Store the response as proposed.
        case cache
        /// Store nothing.
        case doNotCache
        /// Store the response the closure returns, or nothing when it returns nil.
        case modify(@Sendable (_ task: URLSessionDataTask, _ cachedResponse: CachedURLResponse) -> CachedURLResponse?)
    }

    /// Stores every response as proposed.
    public static let cache = ResponseCacher(behavior: .cache)
    /// Stores no response.
    public static let doNotCache = ResponseCacher(behavior: .doNotCache)

    /// The behavior applied to each response.
    public let behavior: Behavior

    /// Creates a response cacher with `behavior`.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }
}

extension ResponseCacher: CachedResponseHandler {
    /// Applies `behavior`; `completion` is called before this returns.
    public func dataTask(_ task: URLSessionDataTask,
                         willCacheResponse response: CachedURLResponse,
                         completion: @escaping (CachedURLResponse?) -> Void) {
        switch behavior {
        case .cache: completion(response)
        case .doNotCache: completion(nil)
        case let .modify(closure): completion(closure(task, response))
        }
    }
}

extension CachedResponseHandler where Self == ResponseCacher {
    /// Stores every response as proposed.
    public static var cache: ResponseCacher { .cache }
    /// Stores no response.
    public static var doNotCache: ResponseCacher { .doNotCache }
    /// Stores the response `closure` returns, or nothing when it returns nil.
    public static func modify(using closure: @escaping (@Sendable (URLSessionDataTask, CachedURLResponse) -> CachedURLResponse?)) -> ResponseCacher {
        ResponseCacher(behavior: .modify(closure))
    }
}
