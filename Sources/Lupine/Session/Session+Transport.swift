import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// How a URLRequest becomes a transport exchange: the configuration's headers and timeouts are
// applied here, as URLSession applies them.
extension Session {
    /// What a hop of `urlRequest` sends: the configuration's `httpAdditionalHeaders` are added
    /// where the request does not set the same header itself.
    func outgoingRequest(for urlRequest: URLRequest) -> OutgoingRequest {
        OutgoingRequest(base: urlRequest, sessionFields: additionalHeaders)
    }

    /// The transport's view of `urlRequest`, sending `sentFields` (an `OutgoingRequest`'s fields:
    /// the request's own with the Session's added) instead of the request's own.
    ///
    /// The idle timeout is the request's `timeoutInterval` when it was changed from URLRequest's
    /// default of 60 seconds, else the configuration's `timeoutIntervalForRequest`; the deadline
    /// is `timeoutIntervalForResource` from now. `schemes` are the URL schemes the request kind
    /// speaks. The stored cookies for the URL (see `cookieHeader(for:headerFields:)`) and the cache's
    /// `conditionalHeaders` are added to the fields sent, not to `urlRequest`, so that every
    /// redirect hop reads the cookie storage afresh. The proxy is chosen per hop (see
    /// `proxy(for:headerFields:)`), and so is the TLS policy (see `tlsPolicy(for:requestCredential:)`).
    /// An empty `schemes` accepts any scheme, and `evaluatesTrust: false` skips the TLS policy:
    /// both for a request a URLProtocol class answers.
    func transportRequest(for urlRequest: URLRequest,
                          headerFields sentFields: [String: String],
                          sortedFields: [HTTPHeader]? = nil,
                          body: TransportRequestBody?,
                          deadline: Date?,
                          schemes: Set<String> = ["http", "https"],
                          conditionalHeaders: [HTTPHeader] = [],
                          credential: URLCredential? = nil,
                          evaluatesTrust: Bool = true) throws -> TransportRequest {
        guard let url = urlRequest.url else { throw AFError.sessionTaskFailed(error: URLError(.badURL)) }
        guard let scheme = url.scheme?.lowercased(), schemes.isEmpty || schemes.contains(scheme) else {
            throw Self.failure(.unsupportedURL, url: url)
        }
        // A URLProtocol class may answer a URL without a host (`data:`, a custom scheme). The
        // host as written: empty or not alike, without the percent-decoding of `host`.
        guard schemes.isEmpty || !(url.host(percentEncoded: true) ?? "").isEmpty else { throw Self.failure(.badURL, url: url) }
        // The Session's fields alone come sorted already, shared by every hop that sends them (a
        // copy only when a cookie or a conditional field is added); other fields make one array,
        // sorted in place, with room for those.
        var headerFields = sortedFields
            ?? SessionHeaderFields.sortedForTransport(sentFields, reservingCapacity: conditionalHeaders.count + 1)
        if let cookie = cookieHeader(for: urlRequest, headerFields: sentFields) { headerFields.append(cookie) }
        if !conditionalHeaders.isEmpty { headerFields += conditionalHeaders }
        let proxy = proxy(for: url, headerFields: &headerFields)
        let tlsPolicy = evaluatesTrust ? try tlsPolicy(for: url, scheme: scheme, requestCredential: credential) : nil
        let requestTimeout = urlRequest.timeoutInterval
        let idleTimeout = requestTimeout != Self.defaultRequestTimeout && requestTimeout > 0
            ? requestTimeout
            : hopSettings.requestTimeout
        return TransportRequest(url: url,
                                method: HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET"),
                                headerFields: headerFields,
                                body: body,
                                idleTimeout: idleTimeout > 0 ? idleTimeout : 60,
                                deadline: deadline,
                                proxy: proxy,
                                tlsPolicy: tlsPolicy)
    }

    /// The end of an attempt that starts now: `timeoutIntervalForResource` covers every redirect
    /// hop of the attempt, as it covers a whole URLSession task.
    func attemptDeadline() -> Date? {
        hopSettings.attemptDuration.map { Date(timeIntervalSinceNow: $0) }
    }

    private static func failure(_ code: URLError.Code, url: URL) -> AFError {
        .sessionTaskFailed(error: URLError(code, userInfo: [
            NSURLErrorFailingURLErrorKey: url,
            NSLocalizedDescriptionKey: TransportErrorMapping.description(of: code),
        ]))
    }

    /// URLRequest's own default `timeoutInterval`.
    static let defaultRequestTimeout: TimeInterval = 60
}
