import Crypto
import NIOCore
import NIOHTTP1

/// `/upload` (and `/upload/<anything>`, for tests that count hits on a path of their own): takes
/// a request body of any size without keeping it, and reports what arrived. `/discard` (and
/// `/discard/<anything>`) does the same without hashing.
///
/// The body is hashed as it streams in, so a 1 GiB upload costs the server no memory. The answer
/// is JSON: `bytes`, `sha256` (lowercase hex; null from `/discard`), `method`, and the
/// `Content-Type`, `Content-Length` and `Transfer-Encoding` fields as received (null when absent).
///
/// `/discard` is for measuring clients: hashing costs the server about 1 ms of CPU per MiB on
/// the benchmark machine, three quarters of its work on a 1 MiB POST, which would bound every
/// client's rate alike (the benchmark's S5 posts there).
struct UploadSink {
    static func handles(_ path: String) -> Bool {
        path == "/upload" || path.hasPrefix("/upload/") || discards(path)
    }

    private static func discards(_ path: String) -> Bool {
        path == "/discard" || path.hasPrefix("/discard/")
    }

    private let head: HTTPRequestHead
    /// Nil for `/discard`.
    private var hasher: SHA256?
    private(set) var byteCount = 0

    init(head: HTTPRequestHead, path: String) {
        self.head = head
        hasher = Self.discards(path) ? nil : SHA256()
    }

    mutating func consume(_ chunk: ByteBuffer) {
        if hasher != nil {
            chunk.withUnsafeReadableBytes { hasher?.update(bufferPointer: $0) }
        }
        byteCount += chunk.readableBytes
    }

    func report() -> TestResponse {
        let digest: JSONValue = hasher.map { .string(HexDigit.lowercase($0.finalize())) } ?? .null
        func field(_ name: String) -> JSONValue {
            head.headers.first(name: name).map(JSONValue.string) ?? .null
        }
        return .json(.object([
            "bytes": .integer(byteCount),
            "sha256": digest,
            "method": .string(head.method.rawValue),
            "contentType": field("content-type"),
            "contentLength": field("content-length"),
            "transferEncoding": field("transfer-encoding"),
        ]))
    }
}
