import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The HTTP cache, as URLSession runs it for its data tasks: responses are reused per RFC 9111 and
// the request's cache policy, from Lupine's store for the configuration's `urlCache` (see
// `HTTPCache` and `HTTPCacheStore`).
extension Session {
    /// The request's own cache policy, or the configuration's `requestCachePolicy` when the
    /// request keeps the default `.useProtocolCachePolicy`.
    func cachePolicy(for request: URLRequest) -> URLRequest.CachePolicy {
        request.cachePolicy == .useProtocolCachePolicy ? hopSettings.requestCachePolicy : request.cachePolicy
    }

    /// What the cache does for one hop of a request that uses it; nil when only a read of the
    /// disk can tell and the calling thread may not read it (see `HTTPCache.action`).
    func cacheAction(for outgoing: OutgoingRequest, allowingDiskIO: Bool) -> HTTPCacheAction? {
        guard let httpCache else { return .load }
        return httpCache.action(for: outgoing.base, headerFields: outgoing.headerFields, policy: cachePolicy(for: outgoing.base),
                                asksOnlyIfCached: outgoing.knownToAskOnlyIfCached, allowingDiskIO: allowingDiskIO)
    }

    /// A response to an unsafe method (POST, PUT, DELETE...) that succeeded makes the response
    /// stored for its URL unusable (RFC 9111, section 4.4).
    func invalidateCachedResponse(after head: TransportResponseHead, for request: URLRequest) {
        guard let url = request.url, let httpCache,
              HTTPCacheRules.invalidatesStoredResponse(method: request.httpMethod ?? "GET", statusCode: head.statusCode)
        else { return }
        httpCache.invalidate(url)
    }
}
