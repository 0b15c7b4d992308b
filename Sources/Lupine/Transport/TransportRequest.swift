import Foundation

/// One HTTP request as the transport sends it: the URL, method and header fields exactly as given,
/// an optional body, and the timeouts that apply to this exchange.
public struct TransportRequest: Sendable {
    /// Absolute http or https URL.
    public var url: URL
    /// Method token.
    public var method: HTTPMethod
    /// Header fields in order; a name may repeat.
    public var headerFields: [HTTPHeader]
    /// Body, or nil for none.
    public var body: TransportRequestBody?
    /// Longest quiet period (no bytes sent or received) before the exchange fails with `.timedOut`.
    public var idleTimeout: TimeInterval
    /// Latest moment the exchange may end; past it the exchange fails with `.timedOut`.
    public var deadline: Date?
    /// The proxy to go through, or nil for a direct connection.
    public var proxy: TransportProxy?
    /// For https and wss: the server-trust evaluator and client certificate, or nil for the
    /// system's default validation and no client certificate.
    public var tlsPolicy: TransportTLSPolicy?

    /// Creates a request description.
    public init(url: URL,
                method: HTTPMethod,
                headerFields: [HTTPHeader],
                body: TransportRequestBody? = nil,
                idleTimeout: TimeInterval = 60,
                deadline: Date? = nil,
                proxy: TransportProxy? = nil,
                tlsPolicy: TransportTLSPolicy? = nil) {
        self.url = url
        self.method = method
        self.headerFields = headerFields
        self.body = body
        self.idleTimeout = idleTimeout
        self.deadline = deadline
        self.proxy = proxy
        self.tlsPolicy = tlsPolicy
    }
}

/// Where the bytes of a request body come from.
public enum TransportRequestBody: Sendable {
    /// Bytes in memory.
    case data(Data)
    /// The content of a file, read in chunks while sending.
    case file(URL)
    /// Chunks produced on demand; `nil` ends the body. `length` is sent as Content-Length when known.
    case stream(length: Int64?, nextChunk: @Sendable () async throws -> Data?)

    /// Number of bytes the body will have, when known.
    var knownLength: Int64? {
        switch self {
        case let .data(data): Int64(data.count)
        case let .file(url): (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
        case let .stream(length, _): length
        }
    }
}

/// The status line and header fields of a response, as received.
public struct TransportResponseHead: Sendable {
    /// Status code.
    public var statusCode: Int
    /// Version, such as "HTTP/1.1".
    public var httpVersion: String
    /// Header fields in order; a name may repeat.
    public var headerFields: [HTTPHeader]

    /// Creates a response head.
    public init(statusCode: Int, httpVersion: String = "HTTP/1.1", headerFields: [HTTPHeader]) {
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.headerFields = headerFields
    }
}
