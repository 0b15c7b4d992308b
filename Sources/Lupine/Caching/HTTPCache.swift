import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// A Session's HTTP cache: the rules of `HTTPCacheRules` applied to Lupine's store for the
/// configuration's `URLCache` (see `HTTPCacheStore`: keyed by the whole URL, bounded by the
/// cache's capacities, cleared by its clear calls).
struct HTTPCache: Sendable {
    let store: HTTPCacheStore

    init(urlCache: URLCache) {
        store = HTTPCacheStores.store(for: urlCache)
    }

    /// What the cache does for one hop sending `headerFields` (an `OutgoingRequest`'s), decided
    /// before the network is used. Nil when only a read of the disk can tell and
    /// `allowingDiskIO` is false (the caller is on an event loop or in a task): ask again where
    /// the disk may be read. `asksOnlyIfCached` is what `HTTPCacheRules.asksOnlyIfCached` finds in
    /// `headerFields`, when the caller knows it already.
    func action(for request: URLRequest, headerFields requestHeaders: [String: String], policy: URLRequest.CachePolicy,
                asksOnlyIfCached: Bool? = nil, now: Date? = nil, allowingDiskIO: Bool = true) -> HTTPCacheAction? {
        guard let url = request.url else { return .load }
        let method = request.httpMethod ?? "GET"
        // Only a GET is ever answered from the store, and the reload policies never use it: the
        // store is not asked then.
        guard method.lupineEqualsIgnoringASCIICase("GET"),
              policy != .reloadIgnoringLocalCacheData, policy != .reloadIgnoringLocalAndRemoteCacheData else { return .load }
        // An empty store misses without the key being made (a walk over the whole URL), the
        // request's other fields read or the clock asked.
        guard !store.isEmpty else {
            let decision = HTTPCacheRules.decisionWithoutStoredResponse(
                method: method, policy: policy, asksOnlyIfCached: asksOnlyIfCached ?? HTTPCacheRules.asksOnlyIfCached(requestHeaders))
            return decision == .fail ? .fail : .load
        }
        let stored: StoredResponse?
        switch store.lookUp(url, key: HTTPCacheKey(url), requestHeaders: requestHeaders, allowingDiskIO: allowingDiskIO) {
        case let .found(found): stored = found
        case .needsDiskIO: return nil
        }
        let decision = HTTPCacheRules.decision(method: method,
                                               requestHeaders: requestHeaders,
                                               policy: policy,
                                               stored: stored?.entry,
                                               now: now ?? Date())
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
    /// answers, when RFC 9111 lets the response be stored at all. Returns the disk write of what
    /// was stored before this returned, if any (a handler answering later is not waited for).
    @discardableResult
    func storeIfAllowed(statusCode: Int,
                        headerFields: [String: String],
                        data: Data,
                        for request: OutgoingRequest,
                        requestTime: Date,
                        responseTime: Date,
                        handler: (any CachedResponseHandler)?,
                        task makeTask: () -> URLSessionDataTask) -> HTTPCacheDiskStore.Write? {
        // The fields sent, read without making the merged URLRequest (a copy of the whole
        // Foundation request): most responses are turned down here.
        guard let url = request.url else { return nil }
        let requestHeaders = request.headerFields
        guard HTTPCacheRules.isStorable(method: request.base.httpMethod ?? "GET", requestHeaders: requestHeaders,
                                        statusCode: statusCode, responseHeaders: headerFields) else { return nil }
        let entry = HTTPCacheEntry(statusCode: statusCode, headerFields: headerFields,
                                   requestTime: requestTime, responseTime: responseTime,
                                   varyValues: HTTPCacheRules.varyValues(responseHeaders: headerFields, requestHeaders: requestHeaders))
        // A response with neither freshness nor validators is stale at once and cannot be
        // revalidated: only `returnCacheData...` policies can use it. It is kept in memory only.
        let policy: URLCache.StoragePolicy = HTTPCacheRules.hasFreshnessOrValidators(headerFields) ? .allowed : .allowedInMemoryOnly
        let proposed = StoredResponse(entry: entry, data: data, storagePolicy: policy)
        let (store, key) = (store, HTTPCacheKey(url))
        guard let handler else {
            return store.store(proposed, for: url, key: key, requestHeaders: requestHeaders)
        }
        guard let offered = proposed.cachedURLResponse(for: url) else { return nil }
        ThreadContract.userCode("a cached response handler")
        let answer = NIOLockedValueBox<(isOver: Bool, write: HTTPCacheDiskStore.Write?)>((false, nil))
        handler.dataTask(makeTask(), willCacheResponse: offered) { chosen in
            guard let chosen else { return }
            let stored = chosen === offered
                ? proposed
                : Self.storedResponse(chosen, requestHeaders: requestHeaders, requestTime: requestTime, responseTime: responseTime)
            guard let stored else { return }
            let write = store.store(stored, for: url, key: key, requestHeaders: requestHeaders)
            answer.withLockedValue { answer in
                if !answer.isOver { answer.write = write }
            }
        }
        return answer.withLockedValue { answer in
            answer.isOver = true
            return answer.write
        }
    }

    /// What a handler answered, as the store keeps it; nil when it is no HTTP response, may not be
    /// stored, or forbids storing.
    private static func storedResponse(_ cached: CachedURLResponse, requestHeaders: [String: String],
                                       requestTime: Date, responseTime: Date) -> StoredResponse? {
        guard cached.storagePolicy != .notAllowed, let response = cached.response as? HTTPURLResponse else { return nil }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String { fields[name] = "\(value)" }
        }
        let entry = HTTPCacheEntry(statusCode: response.statusCode, headerFields: fields,
                                   requestTime: requestTime, responseTime: responseTime,
                                   varyValues: HTTPCacheRules.varyValues(responseHeaders: fields, requestHeaders: requestHeaders))
        guard !entry.forbidsStoring else { return nil }
        return StoredResponse(entry: entry, data: cached.data, storagePolicy: cached.storagePolicy)
    }

    /// The stored response brought up to date by a 304 (RFC 9111, section 4.3.4) and returned; it
    /// is stored again, unless the updated header fields forbid storing (`no-store`): then the
    /// stored response is removed, and the next request goes to the network.
    func refresh(_ stored: StoredResponse,
                 notModifiedHeaders: [String: String],
                 for request: URLRequest,
                 requestTime: Date,
                 responseTime: Date) -> StoredResponse {
        let entry = HTTPCacheRules.updated(stored.entry, with: notModifiedHeaders,
                                           requestTime: requestTime, responseTime: responseTime)
        let refreshed = StoredResponse(entry: entry, data: stored.data, storagePolicy: stored.storagePolicy)
        guard let url = request.url else { return refreshed }
        let key = HTTPCacheKey(url)
        if entry.forbidsStoring {
            store.remove(key, url: url)
        } else {
            store.store(refreshed, for: url, key: key, requestHeaders: request.allHTTPHeaderFields ?? [:])
        }
        return refreshed
    }

    /// The largest body worth keeping for `storeIfAllowed`: a larger response is never stored.
    var largestStorableBodySize: Int { store.largestStorableBodySize }

    /// Forgets the responses stored for `url` (an unsafe method changed the resource).
    func invalidate(_ url: URL) {
        store.remove(HTTPCacheKey(url), url: url)
    }

    /// Makes the response stored for `url` unusable when that touches no file (the URL has nothing
    /// on disk); false when `invalidate(_:)` is still needed, which may remove a file.
    func invalidateWithoutTouchingFiles(_ url: URL) -> Bool {
        store.removeWithoutTouchingFiles(HTTPCacheKey(url), url: url)
    }
}
