import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The cache's part in a request's exchange: after a complete response from the network, it is
// offered to the cache; a 304 answering a revalidation is replaced by the stored response.
extension Request {
    /// The request's cache handler, else the Session's, else none (store as proposed).
    var effectiveCachedResponseHandler: (any CachedResponseHandler)? {
        cachedResponseHandler ?? defaults.cachedResponseHandler
    }

    /// A complete response to offer to the cache: the request of the hop that received it, and
    /// when it was sent and answered.
    struct CacheOffer: Sendable {
        let outgoing: OutgoingRequest
        let requestTime: Date
        let responseTime: Date
    }

    /// Offers the complete response `offer` describes to the cache; returns the disk write of
    /// what it stored, if any.
    func offerResponseToCache(_ offer: CacheOffer) -> HTTPCacheDiskStore.Write? {
        guard let httpCache = defaults.httpCache else { return nil }
        let (response, error) = mutableState.withLock { ($0.machine.response, $0.machine.error) }
        // Only GET responses are stored (`HTTPCacheRules.isStorable`): the rest are turned down
        // before anything is built for them.
        guard error == nil, let response, HTTPCacheRules.isStorableMethod(offer.outgoing.base.httpMethod) else { return nil }
        // A response that forbids storing (`no-store`, as many API responses say), or a stream that
        // kept no copy of its body (it outgrew what the cache takes), is not offered.
        guard !response.head.forbidsStoring, let data = responseBodyForCache else { return nil }
        let outgoing = offer.outgoing
        return httpCache.storeIfAllowed(statusCode: response.statusCode,
                                 headerFields: ResponseHeaderFields.dictionary(from: response.head.headerFields),
                                 data: data,
                                 for: outgoing,
                                 requestTime: offer.requestTime,
                                 responseTime: offer.responseTime,
                                 handler: effectiveCachedResponseHandler,
                                 // The facade task is made only for a handler to see.
                                 task: { self.cacheHandlerTask(for: outgoing.urlRequest) })
    }

    /// The stored response updated with the header fields of the 304 that revalidated it.
    func refreshStoredResponse(_ stored: StoredResponse,
                               with head: TransportResponseHead,
                               sentAs urlRequest: URLRequest,
                               requestTime: Date,
                               responseTime: Date) -> StoredResponse {
        guard let httpCache = defaults.httpCache else { return stored }
        return httpCache.refresh(stored, notModifiedHeaders: ResponseHeaderFields.dictionary(from: head.headerFields),
                                 for: urlRequest, requestTime: requestTime, responseTime: responseTime)
    }

    /// The error of a request that the cache could not answer and may not load
    /// (`returnCacheDataDontLoad`, `Cache-Control: only-if-cached`), as URLSession reports it.
    static func cacheMissError(for url: URL?) -> AFError {
        .sessionTaskFailed(error: URLError(.resourceUnavailable, userInfo: [
            NSURLErrorFailingURLErrorKey: url as Any,
            NSLocalizedDescriptionKey: TransportErrorMapping.description(of: .resourceUnavailable),
        ]))
    }
}
