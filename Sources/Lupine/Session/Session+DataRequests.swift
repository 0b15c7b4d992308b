import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeDataRequest(_ convertible: any URLRequestConvertible,
                         interceptor: (any RequestInterceptor)?,
                         shouldAutomaticallyResume: Bool?) -> DataRequest {
        perform(DataRequest(convertible: convertible,
                            context: requestContext(interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)))
    }

    /// What a new request is made with. Its underlying queue is the root queue, as in Alamofire
    /// (a queue per request cost an allocation and a dispatch wake-up per request, and bought
    /// nothing: request state is lock-protected).
    func requestContext(interceptor: (any RequestInterceptor)?, shouldAutomaticallyResume: Bool?) -> RequestContext {
        RequestContext(underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
                       interceptor: interceptor, session: self, shouldAutomaticallyResume: shouldAutomaticallyResume,
                       defaultQueue: callbackQueue)
    }
}

/// A URL, method, dictionary parameters and headers, turned into a URLRequest when the request sets up.
///
/// A class: the request holds it as `any URLRequestConvertible`, where a struct this size would be
/// boxed, and the box copied once more as the request stores it.
final class ParametersRequestConvertible: URLRequestConvertible {
    let url: any URLConvertible
    let method: HTTPMethod
    let parameters: Parameters?
    let encoding: any ParameterEncoding
    let headers: HTTPHeaders?
    let requestModifier: Session.RequestModifier?

    init(url: any URLConvertible, method: HTTPMethod, parameters: Parameters?, encoding: any ParameterEncoding,
         headers: HTTPHeaders?, requestModifier: Session.RequestModifier?) {
        self.url = url
        self.method = method
        self.parameters = parameters
        self.encoding = encoding
        self.headers = headers
        self.requestModifier = requestModifier
    }

    func asURLRequest() throws -> URLRequest {
        var request = try URLRequest(url: url, method: method, headers: headers)
        try requestModifier?(&request)
        return try encoding.encode(request, with: parameters)
    }
}

/// A URL, method, Encodable parameters and headers, turned into a URLRequest when the request sets up.
struct EncodableRequestConvertible<Parameters: Encodable & Sendable>: URLRequestConvertible {
    let url: any URLConvertible
    let method: HTTPMethod
    let parameters: Parameters?
    let encoder: any ParameterEncoder
    let headers: HTTPHeaders?
    let requestModifier: Session.RequestModifier?

    func asURLRequest() throws -> URLRequest {
        var request = try URLRequest(url: url, method: method, headers: headers)
        try requestModifier?(&request)
        return try parameters.map { try encoder.encode($0, into: request) } ?? request
    }
}
