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
        let stored = urlCache.cachedResponse(for: Self.key(url)).flatMap(StoredResponse.init)
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
                        task: URLSessionDataTask) {
        guard let url = request.url else { return }
        let requestHeaders = request.allHTTPHeaderFields ?? [:]
        guard HTTPCacheRules.isStorable(method: request.httpMethod ?? "GET", requestHeaders: requestHeaders,
                                        statusCode: response.statusCode, responseHeaders: headerFields),
              data.count <= max(urlCache.memoryCapacity, urlCache.diskCapacity) / 20 else { return }
        let entry = HTTPCacheEntry(statusCode: response.statusCode, headerFields: headerFields,
                                   requestTime: requestTime, responseTime: responseTime,
                                   varyValues: HTTPCacheRules.varyValues(responseHeaders: headerFields, requestHeaders: requestHeaders))
        let proposed = CachedURLResponse(response: response, data: data, userInfo: entry.userInfo, storagePolicy: .allowed)
        let cache = urlCache
        let store: (CachedURLResponse?) -> Void = { chosen in
            guard let chosen else { return }
            cache.storeCachedResponse(chosen, for: Self.key(url))
        }
        if let handler {
            handler.dataTask(task, willCacheResponse: proposed, completion: store)
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
        urlCache.storeCachedResponse(cached, for: Self.key(url))
        return StoredResponse(cached) ?? stored
    }

    /// Forgets the response stored for `url` (an unsafe method changed the resource).
    func invalidate(_ url: URL) {
        urlCache.removeCachedResponse(for: Self.key(url))
    }

    /// The request entries are stored under: only the URL counts, whatever the request's policy.
    private static func key(_ url: URL) -> URLRequest {
        URLRequest(url: url)
    }
}

/// What the cache does for one hop.
enum HTTPCacheAction: @unchecked Sendable {
    /// Use the network; the response may be stored.
    case load
    /// Answer from the stored response; nothing is sent.
    case replay(StoredResponse)
    /// Send a conditional request; a 304 answer is replaced by the stored response.
    case revalidate(StoredResponse, conditionalHeaders: [HTTPHeader])
    /// Nothing stored and the policy forbids loading (`returnCacheDataDontLoad`, `only-if-cached`).
    case fail

    /// The fields that make the hop's request conditional; empty unless revalidating.
    var conditionalHeaders: [HTTPHeader] {
        if case let .revalidate(_, headers) = self { return headers }
        return []
    }
}

/// A response held by the cache, with what the rules know about it.
struct StoredResponse: @unchecked Sendable {
    // CachedURLResponse is immutable once made.
    let cached: CachedURLResponse
    let entry: HTTPCacheEntry

    let response: HTTPURLResponse

    /// The stored response `cached` holds; nil when it holds no HTTP response.
    init?(_ cached: CachedURLResponse) {
        guard let response = cached.response as? HTTPURLResponse, let entry = HTTPCacheEntry(cached) else { return nil }
        self.cached = cached
        self.entry = entry
        self.response = response
    }

    var data: Data { cached.data }
    /// Corelibs' HTTPURLResponse does not keep the version it was made with; stored responses are HTTP/1.1.
    var httpVersion: String { "HTTP/1.1" }

    /// The head delivered in place of the network's: the stored status and header fields, with
    /// an `Age` field giving the response's current age (RFC 9111, section 5.1).
    func head(at now: Date = Date()) -> TransportResponseHead {
        var fields = entry.headerFields.filter { $0.key.caseInsensitiveCompare("Age") != .orderedSame }
        fields["Age"] = String(Int(max(0, HTTPCacheRules.currentAge(entry, now: now))))
        return TransportResponseHead(statusCode: entry.statusCode, httpVersion: httpVersion,
                                     headerFields: fields.sorted { $0.key.lowercased() < $1.key.lowercased() }
                                         .map { HTTPHeader(name: $0.key, value: $0.value) })
    }
}
