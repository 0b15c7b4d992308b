import NIOCore
import NIOHTTP1

/// A complete response whose body is already in memory.
struct TestResponse {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: ByteBuffer

    init(status: HTTPResponseStatus = .ok, headers: HTTPHeaders = [:], body: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static func json(_ value: JSONValue, status: HTTPResponseStatus = .ok) -> TestResponse {
        text(value.serialized, contentType: "application/json", status: status)
    }

    static func text(_ text: String, contentType: String, status: HTTPResponseStatus = .ok) -> TestResponse {
        TestResponse(
            status: status,
            headers: ["Content-Type": contentType],
            body: ByteBuffer(string: text)
        )
    }

    /// A JSON `{"error": message}` body.
    static func error(_ status: HTTPResponseStatus, _ message: String) -> TestResponse {
        json(.object(["error": .string(message)]), status: status)
    }

    /// A response with no body; statuses that allow one still get `Content-Length: 0` from the writer.
    static func empty(_ status: HTTPResponseStatus, headers: HTTPHeaders = [:]) -> TestResponse {
        TestResponse(status: status, headers: headers)
    }

    /// Whether RFC 9110 allows this status to carry content (and therefore a Content-Length).
    static func allowsContent(_ status: HTTPResponseStatus) -> Bool {
        !(100..<200).contains(status.code) && status != .noContent && status != .notModified
    }
}
