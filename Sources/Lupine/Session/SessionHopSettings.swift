import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every hop reads of a Session's configuration, read once when the Session is made, as
/// URLSession copies its configuration when it is made: each read of a `URLSessionConfiguration`
/// property is a dynamic call into Foundation, several per hop.
struct SessionHopSettings: Sendable {
    /// `requestCachePolicy`: the policy of a request that keeps `.useProtocolCachePolicy`.
    let requestCachePolicy: URLRequest.CachePolicy
    /// `timeoutIntervalForRequest`: the idle timeout of a request that keeps URLRequest's default.
    let requestTimeout: TimeInterval
    /// `timeoutIntervalForResource`: how long an attempt may last in all; nil when unbounded.
    let attemptDuration: TimeInterval?
    /// The cookie rules over `httpCookieStorage`; nil when the configuration has no storage.
    let cookieJar: CookieJar?
    /// `httpShouldSetCookies`: whether stored cookies are sent.
    let sendsCookies: Bool
    /// Whether responses may store cookies (a storage, and a policy other than `.never`).
    let storesCookies: Bool

    init(_ configuration: URLSessionConfiguration) {
        requestCachePolicy = configuration.requestCachePolicy
        requestTimeout = configuration.timeoutIntervalForRequest
        let resourceTimeout = configuration.timeoutIntervalForResource
        attemptDuration = resourceTimeout > 0 ? resourceTimeout : nil
        let acceptPolicy = configuration.httpCookieAcceptPolicy
        cookieJar = configuration.httpCookieStorage.map { CookieJar(storage: $0, acceptPolicy: acceptPolicy) }
        sendsCookies = configuration.httpShouldSetCookies
        storesCookies = acceptPolicy != .never && cookieJar != nil
    }
}
