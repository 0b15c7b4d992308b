import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Session's HTTP cache: the rules of `HTTPCacheRules` applied to the configuration's
/// `URLCache`, which holds the responses (in memory and on disk, as that cache is configured).
///
/// Entries are keyed by URL alone, as `URLCache` keys them: a response selected by `Vary` replaces
/// the one stored for another variant. Responses whose body exceeds 5% of the cache's larger
/// capacity are not stored, as URLSession does not store them.
struct HTTPCache: @unchecked Sendable {
    // URLCache is internally synchronized; this wrapper adds no state of its own.
    let urlCache: URLCache

    /// What the cache does for one hop, decided before the network is used.
    func action(for request: URLRequest, policy: URLRequest.CachePolicy, now: Date = Date()) -> HTTPCacheAction {
        guard let url = request.url else { return .load }
        let stored = lookUp(url, policy: policy)
        let decision = HTTPCacheRules.decision(method: request.httpMethod ?? "GET",
                                               requestHeaders: request.allHTTPHeaderFields ?? [:],
                                               policy: policy,
                                               stored: stored?.entry,
                                               now: now)
        switch decision {
        case .load: return .load
        case .fail: return .fail
        case .useStored:
            guard let stored else { return .load }
            return .replay(stored)
        case let .revalidate(headers):
            guard let stored else { return .load }
            return .revalidate(stored, conditionalHeaders: headers)
        }
    }

    /// Offers a complete response to `handler` (default: store as proposed) and stores what it
    /// answers, when RFC 9111 lets the response be stored at all.
    func storeIfAllowed(_ response: HTTPURLResponse,
                        headerFields: [String: String],
                        data: Data,
                        for request: URLRequest,
                        requestTime: Date,
                        responseTime: Date,
                        handler: (any CachedResponseHandler)?,
                        task makeTask: () -> URLSessionDataTask) {
        guard let url = request.url else { return }
        let requestHeaders = request.allHTTPHeaderFields ?? [:]
        guard HTTPCacheRules.isStorable(method: request.httpMethod ?? "GET", requestHeaders: requestHeaders,
                                        statusCode: response.statusCode, responseHeaders: headerFields),
              data.count <= max(urlCache.memoryCapacity, urlCache.diskCapacity) / 20 else { return }
        let entry = HTTPCacheEntry(statusCode: response.statusCode, headerFields: headerFields,
                                   requestTime: requestTime, responseTime: responseTime,
                                   varyValues: HTTPCacheRules.varyValues(responseHeaders: headerFields, requestHeaders: requestHeaders))
        // A response with neither freshness nor validators is stale at once and cannot be
        // revalidated: only `returnCacheData...` policies can use it. It is kept in memory only,
        // sparing corelibs' disk cache (an archive, a directory scan and a file per response).
        let isUsefulLater = HTTPCacheRules.hasFreshnessOrValidators(headerFields)
        let proposed = CachedURLResponse(response: response, data: data, userInfo: entry.userInfo,
                                         storagePolicy: isUsefulLater ? .allowed : .allowedInMemoryOnly)
        let cache = urlCache
        let store: (CachedURLResponse?) -> Void = { chosen in
            guard let chosen else { return }
            Self.replace(chosen, for: url, in: cache)
        }
        if let handler {
            handler.dataTask(makeTask(), willCacheResponse: proposed, completion: store)
        } else {
            store(proposed)
        }
    }

    /// The stored response brought up to date by a 304, stored again and returned.
    func refresh(_ stored: StoredResponse,
                 notModifiedHeaders: [String: String],
                 for url: URL,
                 requestTime: Date,
                 responseTime: Date) -> StoredResponse {
        let entry = HTTPCacheRules.updated(stored.entry, with: notModifiedHeaders,
                                           requestTime: requestTime, responseTime: responseTime)
        let response = HTTPURLResponse(url: url, statusCode: entry.statusCode,
                                       httpVersion: stored.httpVersion, headerFields: entry.headerFields)
            ?? stored.response
        let cached = CachedURLResponse(response: response, data: stored.data,
                                       userInfo: entry.userInfo, storagePolicy: stored.cached.storagePolicy)
        Self.replace(cached, for: url, in: urlCache)
        return StoredResponse(cached) ?? stored
    }

    /// Forgets the response stored for `url` (an unsafe method changed the resource).
    func invalidate(_ url: URL) {
        urlCache.removeCachedResponse(for: Self.key(url))
    }

    /// The stored response for `url`, skipping the cache when it was found not to hold one (under
    /// the default policy; see `URLCacheMissMemo`).
    private func lookUp(_ url: URL, policy: URLRequest.CachePolicy) -> StoredResponse? {
        let usesMemo = policy == .useProtocolCachePolicy
        if usesMemo, URLCacheMissMemo.shared.isKnownMiss(url, in: urlCache) { return nil }
        guard let cached = urlCache.cachedResponse(for: Self.key(url)) else {
            if usesMemo { URLCacheMissMemo.shared.recordMiss(url, in: urlCache) }
            return nil
        }
        return StoredResponse(cached)
    }

    /// Stores `cached` for `url`, removing what the cache held for it first.
    ///
    /// swift-corelibs-foundation's `URLCache` appends the URL to its eviction order on every store,
    /// also when it already holds that URL: the order grows by one entry per store (a leak of about
    /// 110 bytes a response in a long-running process), and a later eviction reaches the stale
    /// duplicate and force-unwraps an entry it already removed, which traps the process. Removing
    /// first keeps one order entry per URL.
    private static func replace(_ cached: CachedURLResponse, for url: URL, in cache: URLCache) {
        let key = Self.key(url)
        cache.removeCachedResponse(for: key)
        cache.storeCachedResponse(cached, for: key)
        URLCacheMissMemo.shared.forget(url, in: cache)
    }

    /// The request entries are stored under: only the URL counts, whatever the request's policy.
    private static func key(_ url: URL) -> URLRequest {
        URLRequest(url: url)
    }
}
