import HTTPTypes
import OpenAPIRuntime

/// What body a response hands to the generated client.
enum ResponseBodyFraming: Equatable {
    /// None: the response to a HEAD request.
    case none
    /// An empty one: a status that has no content (204, 304), or `Content-Length: 0`.
    case empty
    /// The parts as they arrive, of the length the server declared when it can be trusted.
    case streamed(HTTPBody.Length)

    init(head: HTTPResponse, method: HTTPRequest.Method) {
        if method == .head {
            self = .none
            return
        }
        let status = head.status.code
        if status == 204 || status == 304 || (100..<200).contains(status) {
            self = .empty
            return
        }
        let declared = head.headerFields[.contentLength].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        if declared == 0 {
            self = .empty
            return
        }
        // A coded body (gzip, deflate) is decoded on the way in: its declared length counts the
        // coded bytes, not those the client gets.
        let coding = head.headerFields[.contentEncoding]?.lowercased()
        let isCoded = coding.map { !$0.isEmpty && $0 != "identity" } ?? false
        self = .streamed(declared.map { isCoded ? .unknown : .known($0) } ?? .unknown)
    }

    /// Whether parts of the request's body go to the client.
    var streamsBody: Bool {
        if case .streamed = self { return true }
        return false
    }
}
