import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides what happens on each redirect Lupine is about to follow.
///
/// `completion(request)` follows with that request (possibly modified); `completion(nil)` stops,
/// and the 3xx response, with its body, becomes the request's response. URLSession's rules apply
/// before the handler is asked: too many hops and https-to-http redirects fail without asking.
public protocol RedirectHandler: Sendable {
    /// - Parameters:
    ///   - task: A task describing the current hop (its request and response).
    ///   - request: The request Lupine would send next.
    ///   - response: The 3xx response.
    ///   - completion: Call once, from any thread, with the request to send or nil.
    func task(_ task: URLSessionTask,
              willBeRedirectedTo request: URLRequest,
              for response: HTTPURLResponse,
              completion: @escaping (URLRequest?) -> Void)
}

/// A ready-made `RedirectHandler`: follow, don't follow, or modify.
public struct Redirector {
    /// What to do with a redirect.
    public enum Behavior: Sendable {
        /// Send the proposed request.
        case follow
        /// Stop; the 3xx response is the final response.
        case doNotFollow
        /// Send the request the closure returns, or stop when it returns nil.
        case modify(@Sendable (_ task: URLSessionTask, _ request: URLRequest, _ response: HTTPURLResponse) -> URLRequest?)
    }

    /// Follows every redirect.
    public static let follow = Redirector(behavior: .follow)
    /// Follows no redirect.
    public static let doNotFollow = Redirector(behavior: .doNotFollow)

    /// The behavior applied to each redirect.
    public let behavior: Behavior

    /// Creates a redirector with `behavior`.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }
}

extension Redirector: RedirectHandler {
    /// Applies `behavior`.
    public func task(_ task: URLSessionTask,
                     willBeRedirectedTo request: URLRequest,
                     for response: HTTPURLResponse,
                     completion: @escaping (URLRequest?) -> Void) {
        switch behavior {
        case .follow: completion(request)
        case .doNotFollow: completion(nil)
        case let .modify(closure): completion(closure(task, request, response))
        }
    }
}

extension RedirectHandler where Self == Redirector {
    /// Follows every redirect.
    public static var follow: Redirector { .follow }
    /// Follows no redirect.
    public static var doNotFollow: Redirector { .doNotFollow }
    /// Sends the request `closure` returns, or stops when it returns nil.
    public static func modify(using closure: @escaping @Sendable (URLSessionTask, URLRequest, HTTPURLResponse) -> URLRequest?) -> Redirector {
        Redirector(behavior: .modify(closure))
    }
}
