import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Lupine
import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` that sends each operation of a generated client
/// through a Lupine `Session`, streaming both bodies.
///
/// Every operation becomes one Lupine `DataStreamRequest`, so a generated client gets what the
/// Session gives any request: its interceptors (adapters, `RetryPolicy`, `AuthenticationInterceptor`
/// refreshing a credential), redirects, cookies, the HTTP cache, server trust and client
/// certificates, timeouts, and its event monitors (logging, metrics, tracing).
///
/// ```swift
/// let client = Client(serverURL: try Servers.Server1.url(),
///                     transport: LupineClientTransport(session: session))
/// ```
///
/// The response is returned as soon as its head arrives. Its body yields the parts as they
/// arrive (server-sent events, JSON Lines, a large download), carries the length when the server
/// declared one, and can be iterated once. It is paced by the caller: a part counts as handled
/// only once the caller's iteration has taken it, and the request stops reading the socket while
/// about 1 MiB is waiting for the caller, so a slow reader slows the server instead of filling
/// memory. Cancelling the task that iterates, or letting go of an unfinished body, cancels the
/// request.
///
/// The request body is streamed from its `HTTPBody` as the connection takes it, never collected,
/// with its length as `Content-Length` when known (chunked otherwise). Each attempt reads the body
/// again: a body that can be iterated only once (`IterationBehavior.single`, such as one made
/// from an `AsyncStream`) cannot be sent twice, so a retry or a 307/308 redirect after it was read
/// fails with `AFError.createUploadableFailed(error: TransportError.requestBodyNotReplayable)`
/// instead of sending a partial or empty body. Bodies made from bytes in memory are
/// `IterationBehavior.multiple` and are retried normally.
///
/// A response whose status is outside `Configuration.acceptableStatusCodes` fails the request's
/// validation, so the interceptors' retriers see it (a `RetryPolicy` retries a 503, an
/// `AuthenticationInterceptor` refreshes after a 401): since they decide once its body is complete,
/// such a response is held, its body kept in memory up to 1 MiB, until they have decided. Once no
/// retrier asks for another attempt, that last response is handed to the generated client, which
/// decodes the documented error response or reports `.undocumented`. A held body that grows past
/// 1 MiB is handed to the client at once and no longer retried. Once a response was handed to the
/// client no other attempt follows it: a transfer that fails mid-body ends the body with the
/// request's `AFError` instead of being retried. Failures without a response (a refused
/// connection, a timeout, a cancellation, a server trust failure) are thrown as the request's
/// `AFError`; the generated client wraps it in its `ClientError`.
public struct LupineClientTransport: ClientTransport {
    /// How the transport makes its requests.
    public struct Configuration: Sendable {
        /// An interceptor for this transport's requests, run after the Session's own.
        public var interceptor: (any RequestInterceptor)?
        /// The statuses that pass validation; the others go through the retriers first (see the
        /// type's description). nil turns validation off: no status is retried.
        public var acceptableStatusCodes: Range<Int>?
        /// No longer used: request bodies are streamed, never collected.
        @available(*, deprecated, message: "Request bodies are streamed, never collected: there is no limit to set.")
        public var maximumRequestBodyLength: Int {
            get { legacyMaximumRequestBodyLength }
            set { legacyMaximumRequestBodyLength = newValue }
        }

        private var legacyMaximumRequestBodyLength = 64 * 1024 * 1024

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - interceptor: Adapter and retrier for this transport's requests; nil for the Session's only.
        ///   - acceptableStatusCodes: Statuses that pass validation, `200..<300` by default.
        public init(interceptor: (any RequestInterceptor)? = nil,
                    acceptableStatusCodes: Range<Int>? = 200..<300) {
            self.interceptor = interceptor
            self.acceptableStatusCodes = acceptableStatusCodes
        }

        /// Creates a configuration; `maximumRequestBodyLength` is ignored (bodies are streamed).
        @available(*, deprecated, message: "Request bodies are streamed, never collected: drop maximumRequestBodyLength.")
        public init(interceptor: (any RequestInterceptor)? = nil,
                    acceptableStatusCodes: Range<Int>? = 200..<300,
                    maximumRequestBodyLength: Int) {
            self.init(interceptor: interceptor, acceptableStatusCodes: acceptableStatusCodes)
            legacyMaximumRequestBodyLength = maximumRequestBodyLength
        }
    }

    /// The errors of the transport itself; every other failure is the request's `AFError`.
    public enum TransportError: Error, Equatable, CustomStringConvertible {
        /// The base URL and the operation's path do not make a valid URL.
        case invalidRequestURL(path: String, baseURL: URL)
        /// A retry or a redirect would send the request body again, but its `HTTPBody` can be
        /// iterated only once and an earlier attempt read it. Thrown wrapped in
        /// `AFError.createUploadableFailed(error:)`.
        case requestBodyNotReplayable

        public var description: String {
            switch self {
            case let .invalidRequestURL(path, baseURL):
                "the operation path \(path) does not make a valid URL with the base URL \(baseURL.absoluteString)"
            case .requestBodyNotReplayable:
                "the request body can be iterated only once and an earlier attempt already sent it, so it cannot be sent again"
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

    /// Sends one operation's request and returns its response as soon as its head arrives.
    ///
    /// Cancelling the calling task cancels the request.
    ///
    /// - Throws: `TransportError.invalidRequestURL` when no URL can be made; the request's
    ///   `AFError` when no response arrived (the body's own error, when reading the request body
    ///   failed, is wrapped in it).
    public func send(_ request: HTTPRequest,
                     body: HTTPBody?,
                     baseURL: URL,
                     operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let urlRequest = try Self.urlRequest(for: request, baseURL: baseURL)
        let bodySource = body.map { RequestBodySource(body: $0, method: request.method.rawValue) }
        let streamRequest = session.streamRequest(urlRequest, body: { hop in try bodySource?.transportBody(for: hop) },
                                                  interceptor: configuration.interceptor, shouldAutomaticallyResume: false)
        let stream = ResponseStream(request: streamRequest, session: session, method: request.method,
                                    acceptableStatusCodes: configuration.acceptableStatusCodes)
        return try await stream.response()
    }

    // MARK: Conversions

    /// The URLRequest for an operation: the base URL with the operation's path (and query)
    /// appended, its method and header fields. The body is streamed apart from it.
    static func urlRequest(for request: HTTPRequest, baseURL: URL) throws -> URLRequest {
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
        return urlRequest
    }
}
