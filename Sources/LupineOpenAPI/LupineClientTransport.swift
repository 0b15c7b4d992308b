import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Lupine
import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` that sends each operation of a generated client
/// through a Lupine `Session`.
///
/// Every operation becomes one Lupine data request, so a generated client gets what the Session
/// gives any request: its interceptors (adapters, `RetryPolicy`, `AuthenticationInterceptor`
/// refreshing a credential), redirects, cookies, the HTTP cache, server trust and client
/// certificates, timeouts, and its event monitors (logging, metrics, tracing).
///
/// ```swift
/// let client = Client(serverURL: try Servers.Server1.url(),
///                     transport: LupineClientTransport(session: session))
/// ```
///
/// A response whose status is outside `Configuration.acceptableStatusCodes` fails the request's
/// validation, so the interceptors' retriers see it (a `RetryPolicy` retries a 503, an
/// `AuthenticationInterceptor` refreshes after a 401); once no retrier asks for another attempt,
/// that last response is still handed to the generated client, which decodes the documented
/// error response or reports `.undocumented`. Failures without a response (a refused connection,
/// a timeout, a cancellation, a server trust failure) are thrown as the request's `AFError`;
/// the generated client wraps it in its `ClientError`.
///
/// Request and response bodies are held in memory: the request body is collected before the
/// request starts (see `Configuration.maximumRequestBodyLength`), and the response body arrives
/// whole, as for any data request.
public struct LupineClientTransport: ClientTransport {
    /// How the transport makes its requests.
    public struct Configuration: Sendable {
        /// An interceptor for this transport's requests, run after the Session's own.
        public var interceptor: (any RequestInterceptor)?
        /// The statuses that pass validation; the others go through the retriers first (see the
        /// type's description). nil turns validation off: no status is retried.
        public var acceptableStatusCodes: Range<Int>?
        /// The largest request body collected, in bytes; a larger one throws before anything is sent.
        public var maximumRequestBodyLength: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - interceptor: Adapter and retrier for this transport's requests; nil for the Session's only.
        ///   - acceptableStatusCodes: Statuses that pass validation, `200..<300` by default.
        ///   - maximumRequestBodyLength: The largest request body collected, 64 MiB by default.
        public init(interceptor: (any RequestInterceptor)? = nil,
                    acceptableStatusCodes: Range<Int>? = 200..<300,
                    maximumRequestBodyLength: Int = 64 * 1024 * 1024) {
            self.interceptor = interceptor
            self.acceptableStatusCodes = acceptableStatusCodes
            self.maximumRequestBodyLength = maximumRequestBodyLength
        }
    }

    /// The errors of the transport itself; every other failure is the request's `AFError`.
    public enum TransportError: Error, Equatable, CustomStringConvertible {
        /// The base URL and the operation's path do not make a valid URL.
        case invalidRequestURL(path: String, baseURL: URL)

        public var description: String {
            switch self {
            case let .invalidRequestURL(path, baseURL):
                "the operation path \(path) does not make a valid URL with the base URL \(baseURL.absoluteString)"
            }
        }
    }

    /// The Session every request goes through.
    public let session: Session
    /// How requests are made.
    public let configuration: Configuration

    /// Creates a transport on `session`.
    ///
    /// - Parameters:
    ///   - session: The Session whose interceptors, cache, trust and monitors apply; `AF` by default.
    ///   - configuration: Validation, an extra interceptor and the request body limit.
    public init(session: Session = .default, configuration: Configuration = Configuration()) {
        self.session = session
        self.configuration = configuration
    }

    /// Sends one operation's request and returns its response.
    ///
    /// Cancelling the calling task cancels the request.
    ///
    /// - Throws: `TransportError.invalidRequestURL` when no URL can be made; the request's
    ///   `AFError` when no response arrived; the body's error when the request body cannot be
    ///   collected (longer than `maximumRequestBodyLength`, or its sequence fails).
    public func send(_ request: HTTPRequest,
                     body: HTTPBody?,
                     baseURL: URL,
                     operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let urlRequest = try await Self.urlRequest(for: request, body: body, baseURL: baseURL,
                                                   maximumBodyLength: configuration.maximumRequestBodyLength)
        var dataRequest = session.request(urlRequest, interceptor: configuration.interceptor)
        if let acceptable = configuration.acceptableStatusCodes {
            dataRequest = dataRequest.validate(statusCode: acceptable)
        }
        let response = await dataRequest.serializingResponse(using: RawBodySerializer()).response
        return try Self.result(of: response, method: request.method)
    }

    // MARK: Conversions

    /// The URLRequest for an operation: the base URL with the operation's path (and query)
    /// appended, its method and header fields, and its body collected.
    static func urlRequest(for request: HTTPRequest,
                           body: HTTPBody?,
                           baseURL: URL,
                           maximumBodyLength: Int) async throws -> URLRequest {
        let path = request.path ?? ""
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
              let operation = URLComponents(string: path) else {
            throw TransportError.invalidRequestURL(path: path, baseURL: baseURL)
        }
        // The operation path is appended to the base URL's path (a server URL such as
        // https://api.example.com/v2 keeps its /v2), never resolved against it.
        var basePath = components.percentEncodedPath
        if basePath.hasSuffix("/"), operation.percentEncodedPath.hasPrefix("/") { basePath.removeLast() }
        components.percentEncodedPath = basePath + operation.percentEncodedPath
        components.percentEncodedQuery = operation.percentEncodedQuery
        guard let url = components.url else { throw TransportError.invalidRequestURL(path: path, baseURL: baseURL) }

        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        if let body {
            urlRequest.httpBody = try await Data(collecting: body, upTo: maximumBodyLength)
        }
        return urlRequest
    }

    /// The response to hand to the generated client, or the error to throw.
    static func result(of response: DataResponse<Data, AFError>,
                       method: HTTPRequest.Method) throws -> (HTTPResponse, HTTPBody?) {
        switch response.result {
        case let .success(data):
            guard let httpResponse = response.response else { throw AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength) }
            return convert(httpResponse, data: data, method: method)
        case let .failure(error):
            // A status validation rejected is still the server's answer: the retriers have seen
            // it, and now the generated client decodes it.
            guard case .responseValidationFailed(reason: .unacceptableStatusCode) = error,
                  let httpResponse = response.response else { throw error }
            return convert(httpResponse, data: response.data ?? Data(), method: method)
        }
    }

    private static func convert(_ response: HTTPURLResponse, data: Data, method: HTTPRequest.Method) -> (HTTPResponse, HTTPBody?) {
        var fields = HTTPFields()
        for (key, value) in response.allHeaderFields {
            guard let text = key as? String, let name = HTTPField.Name(text) else { continue }
            fields.append(HTTPField(name: name, value: "\(value)"))
        }
        let head = HTTPResponse(status: HTTPResponse.Status(code: response.statusCode), headerFields: fields)
        // A HEAD response has no body, whatever its Content-Length says.
        return (head, method == .head ? nil : HTTPBody(data))
    }
}

/// Hands the response body over as it arrived: an empty body is an empty `Data`, never an error,
/// since the generated client knows which of its responses have a body.
struct RawBodySerializer: DataResponseSerializerProtocol {
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Data {
        if let error { throw error }
        return data ?? Data()
    }
}
