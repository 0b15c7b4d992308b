import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A URL, method, headers and parameters, turned into a URLRequest when the request sets up: what
/// `Session.request(_:method:parameters:...)`, `download`, `upload`, `streamRequest` and
/// `webSocketRequest` make of their arguments.
///
/// A class: the request holds it as `any URLRequestConvertible`, where a struct this size would be
/// boxed, and the box copied once more as the request stores it.
final class SessionRequestConvertible<Body: RequestParametersEncoding>: URLRequestConvertible {
    /// What the URLRequest is made of before its parameters go in.
    struct Parts: Sendable {
        let url: any URLConvertible
        let method: HTTPMethod
        let headers: HTTPHeaders?
        let requestModifier: Session.RequestModifier?
    }

    let parts: Parts
    /// The parameters, and how they go into the request.
    let parameters: Body

    init(url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?, requestModifier: Session.RequestModifier?,
         parameters: Body) {
        parts = Parts(url: url, method: method, headers: headers, requestModifier: requestModifier)
        self.parameters = parameters
    }

    func asURLRequest() throws -> URLRequest {
        var request = try URLRequest(url: parts.url, method: parts.method, headers: parts.headers)
        try parts.requestModifier?(&request)
        return try parameters.encode(into: request)
    }
}

/// Parameters of a `SessionRequestConvertible`, and how they go into its URLRequest.
protocol RequestParametersEncoding: Sendable {
    /// `request` with the parameters encoded into it.
    func encode(into request: URLRequest) throws -> URLRequest
}

/// A dictionary encoded by a `ParameterEncoding`.
struct DictionaryParameters: RequestParametersEncoding {
    let parameters: Parameters?
    let encoding: any ParameterEncoding

    func encode(into request: URLRequest) throws -> URLRequest {
        try encoding.encode(request, with: parameters)
    }
}

/// An `Encodable` value encoded by a `ParameterEncoder`, which is not called for nil.
struct EncodableParameters<Value: Encodable & Sendable>: RequestParametersEncoding {
    let value: Value?
    let encoder: any ParameterEncoder

    func encode(into request: URLRequest) throws -> URLRequest {
        try value.map { try encoder.encode($0, into: request) } ?? request
    }
}

/// No parameters (uploads, whose body is given apart).
struct NoParameters: RequestParametersEncoding {
    func encode(into request: URLRequest) throws -> URLRequest { request }
}
