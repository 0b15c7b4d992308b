import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine

/// What LupineTestServer's `/upload` sink reports about the body it received.
struct SinkReport: Decodable, Sendable {
    let bytes: Int
    let sha256: String
    let method: String
    let contentType: String?
    let contentLength: String?
    let transferEncoding: String?
}

/// What LupineTestServer's `/discard` sink reports: `/upload`'s report without the hash.
struct DiscardReport: Decodable, Sendable {
    let bytes: Int
    let sha256: String?
    let method: String
    let contentLength: String?
}

/// What LupineTestServer's `/multipart` echo reports about each part it parsed.
struct MultipartEcho: Decodable, Sendable {
    struct Part: Decodable, Sendable {
        let name: String?
        let filename: String?
        let contentType: String?
        let size: Int
        let sha256: String
        let text: String?
    }

    let parts: [Part]
}

/// Lowercase hex SHA-256, as the server reports it.
func sha256Hex(_ data: Data) -> String {
    SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
}

/// `count` pseudo-random bytes, the same for the same `seed`.
func patternedBytes(count: Int, seed: UInt8 = 7) -> Data {
    var data = Data(count: count)
    data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
        var state = UInt32(seed) &+ 0x9E37_79B9
        for index in 0..<count {
            state = state &* 1_664_525 &+ 1_013_904_223
            buffer[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
    }
    return data
}

/// Whether a multipart temporary file of `request` still exists (false when the body was in memory).
func temporaryUploadFileExists(_ uploadable: UploadRequest.Uploadable?) -> Bool {
    guard case let .file(url, true)? = uploadable else { return false }
    return FileManager.default.fileExists(atPath: url.path)
}

/// An UploadableConvertible whose creation always fails.
struct FailingUploadable: UploadableConvertible {
    struct Failure: Error, Equatable {}

    func createUploadable() throws -> UploadRequest.Uploadable { throw Failure() }
}
