import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// URLProtocol classes answering requests in place of the transport: how code written for
// Alamofire stubs the network in its tests.
extension Session {
    /// The URLProtocol class that answers `urlRequest`, if any: the configuration's
    /// `protocolClasses` in order, then the classes registered with `URLProtocol.registerClass(_:)`,
    /// most recent first; the first whose `canInit(with:)` accepts the request wins, as with
    /// URLSession. A `data:` URL none of them answers goes to Lupine's loader of them, as it goes
    /// to Foundation's with URLSession. WebSocket requests always use the network.
    func urlProtocolClass(for outgoing: OutgoingRequest, request: Request) -> URLProtocol.Type? {
        guard !(request is WebSocketRequest) else { return nil }
        let registered = URLProtocolRegistry.registered
        if !urlProtocolClasses.isEmpty || !registered.isEmpty {
            let urlRequest = outgoing.urlRequest
            ThreadContract.userCode("a URLProtocol class")
            if let answering = (urlProtocolClasses + registered).first(where: { $0.canInit(with: urlRequest) }) {
                return answering
            }
        }
        return outgoing.url?.lupineHasScheme("data") == true ? URLProtocolRegistry.dataURLClass : nil
    }

    /// The transport that answers one exchange of `request` with `protocolClass`.
    func urlProtocolTransport(_ protocolClass: URLProtocol.Type,
                              for urlRequest: URLRequest,
                              request: Request,
                              cacheAction: HTTPCacheAction?) -> URLProtocolTransport {
        var cachedResponse: CachedURLResponse?
        if case let .revalidate(stored, _)? = cacheAction, let url = urlRequest.url {
            cachedResponse = stored.cachedURLResponse(for: url)
        }
        return URLProtocolTransport(protocolClass: protocolClass, urlRequest: urlRequest, cachedResponse: cachedResponse,
                                    task: request.liveAttemptTaskFacade)
    }
}
