import Crypto
import NIOCore
import NIOHTTP1

/// `/upload` (and `/upload/<anything>`, for tests that count hits on a path of their own): takes
/// a request body of any size without keeping it, and reports what arrived.
///
/// The body is hashed as it streams in, so a 1 GiB upload costs the server no memory. The answer
/// is JSON: `bytes`, `sha256` (lowercase hex), `method`, and the `Content-Type`,
/// `Content-Length` and `Transfer-Encoding` fields as received (null when absent).
struct UploadSink {
    static func handles(_ path: String) -> Bool {
        path == "/upload" || path.hasPrefix("/upload/")
    }

    private let head: HTTPRequestHead
    private var hasher = SHA256()
    private(set) var byteCount = 0

    init(head: HTTPRequestHead) {
        self.head = head
    }

    mutating func consume(_ chunk: ByteBuffer) {
        chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        byteCount += chunk.readableBytes
    }

    func report() -> TestResponse {
        let digest = HexDigit.lowercase(hasher.finalize())
        func field(_ name: String) -> JSONValue {
            head.headers.first(name: name).map(JSONValue.string) ?? .null
        }
        return .json(.object([
            "bytes": .integer(byteCount),
            "sha256": .string(digest),
            "method": .string(head.method.rawValue),
            "contentType": field("content-type"),
            "contentLength": field("content-length"),
            "transferEncoding": field("transfer-encoding"),
        ]))
    }
}
