import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// The request's header fields as ``HTTPHeaders``: a view over `allHTTPHeaderFields`.
    ///
    /// Setting it replaces every header field of the request.
    public var headers: HTTPHeaders {
        get { allHTTPHeaderFields.map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { allHTTPHeaderFields = newValue.dictionary }
    }
}

extension HTTPURLResponse {
    /// The response's header fields as ``HTTPHeaders``; empty when `allHeaderFields` is not all strings.
    public var headers: HTTPHeaders {
        (allHeaderFields as? [String: String]).map(HTTPHeaders.init) ?? HTTPHeaders()
    }
}

extension URLSessionConfiguration {
    /// The configuration's `httpAdditionalHeaders` as ``HTTPHeaders``; setting it replaces them.
    ///
    /// A `Session` created with this configuration adds them to the requests it sends.
    public var headers: HTTPHeaders {
        get { (httpAdditionalHeaders as? [String: String]).map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { httpAdditionalHeaders = newValue.dictionary }
    }
}
