import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Lupine's resume data: what a cancelled or failed download hands to `Session.download(resumingWith:)`.
///
/// URLSession's resume data is an opaque archive of its own; Lupine's is an XML property list
/// (a dictionary) with these keys, so that it can be stored, inspected and moved between runs:
///
/// | key              | type    | meaning                                                            |
/// |------------------|---------|--------------------------------------------------------------------|
/// | `version`        | integer | format version, currently 1                                        |
/// | `url`            | string  | URL of the response the bytes came from (after redirects)          |
/// | `headers`        | dict    | header fields of the original request (no `Range`/`If-Range`)      |
/// | `entityTag`      | string  | the response's strong `ETag`, if it had one                        |
/// | `lastModified`   | string  | the response's `Last-Modified`, if it had one                      |
/// | `bytesOnDisk`    | integer | bytes of the body already in the temporary file                    |
/// | `expectedLength` | integer | total body length announced by the server, -1 when unknown         |
/// | `temporaryFile`  | string  | path of the partial file (in the temporary directory)              |
///
/// Resuming sends `Range: bytes=<bytesOnDisk>-` with `If-Range: <entityTag, else lastModified>`. A
/// `206 Partial Content` that starts at `bytesOnDisk` is appended to the partial file; any other
/// answer (a `200` because the server ignores ranges or the resource changed) restarts the file from
/// zero, so a resumed download never splices two versions of a resource.
///
/// The partial file stays in the temporary directory until the download is resumed (or the system
/// cleans the directory). A temporary file path outside the temporary directory, or not named like
/// Lupine's download files, is ignored, and the download starts from zero.
struct ResumeData: Codable, Equatable, Sendable {
    static let currentVersion = 1

    var version: Int
    var url: String
    var headers: [String: String]
    var entityTag: String?
    var lastModified: String?
    var bytesOnDisk: Int64
    var expectedLength: Int64
    var temporaryFile: String

    /// The validator sent as `If-Range`: the entity tag when there is one, else the date.
    var ifRangeValidator: String? { entityTag ?? lastModified }

    func encoded() -> Data? {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        return try? encoder.encode(self)
    }

    init?(data: Data) {
        // Lupine writes XML property lists in UTF-8. Anything else is refused before it reaches
        // PropertyListDecoder, which traps (FoundationEssentials, CodableUtilities.swift) on an
        // <integer> holding bytes that are not UTF-8: resume data may come from a file or a peer.
        guard String(validating: data, as: UTF8.self) != nil,
              data.starts(with: Data("<?xml".utf8)) || data.starts(with: Data("<plist".utf8)),
              let decoded = try? PropertyListDecoder().decode(ResumeData.self, from: data),
              decoded.version == Self.currentVersion,
              decoded.bytesOnDisk >= 0,
              URL(string: decoded.url) != nil
        else { return nil }
        self = decoded
    }

    init(url: URL, headers: [String: String], entityTag: String?, lastModified: String?,
         bytesOnDisk: Int64, expectedLength: Int64, temporaryFile: URL) {
        version = Self.currentVersion
        self.url = url.absoluteString
        self.headers = headers
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.bytesOnDisk = bytesOnDisk
        self.expectedLength = expectedLength
        self.temporaryFile = temporaryFile.path
    }

    /// The partial file, when it is one of Lupine's download files in the temporary directory and
    /// holds at least `bytesOnDisk` bytes; anything else means starting from zero.
    var usablePartialFile: URL? {
        let file = URL(fileURLWithPath: temporaryFile).standardizedFileURL
        let directory = DownloadFiles.directory.standardizedFileURL
        guard bytesOnDisk > 0,
              file.deletingLastPathComponent().path == directory.path,
              DownloadFiles.isDownloadFileName(file.lastPathComponent),
              let size = DownloadFiles.size(of: file), size >= bytesOnDisk
        else { return nil }
        return file
    }
}

/// Where download bodies are written while they arrive.
enum DownloadFiles {
    static let prefix = "LupineDownload_"
    static let suffix = ".tmp"

    static var directory: URL { FileManager.default.temporaryDirectory }

    /// A new temporary file URL for a download of request `id`.
    static func newTemporaryURL(for id: UUID) -> URL {
        directory.appendingPathComponent("\(prefix)\(id.uuidString)_\(UUID().uuidString.prefix(8))\(suffix)")
    }

    static func isDownloadFileName(_ name: String) -> Bool {
        name.hasPrefix(prefix) && name.hasSuffix(suffix) && !name.contains("/")
    }

    static func size(of url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
              let size = attributes[.size] as? NSNumber
        else { return nil }
        return size.int64Value
    }

    static func remove(_ url: URL?) {
        guard let url else { return }
        ThreadContract.diskIO("removing a download's file")
        try? FileManager.default.removeItem(at: url)
    }

    /// Removes `url` on `DiskIO`'s threads, for a caller that does not wait for it.
    static func removeLater(_ url: URL?) {
        guard let url else { return }
        DiskIO.run { remove(url) }
    }
}

/// The URLRequest of an attempt of a download resumed from resume data.
struct ResumeRequestConvertible: URLRequestConvertible {
    let resumeData: ResumeData
    /// Bytes already on disk; 0 starts from zero (no `Range`).
    let offset: Int64

    func asURLRequest() throws -> URLRequest {
        guard let url = URL(string: resumeData.url) else { throw AFError.invalidURL(url: resumeData.url) }
        var request = URLRequest(url: url)
        request.httpMethod = HTTPMethod.get.rawValue
        for (name, value) in resumeData.headers where !Self.isRangeField(name) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        if offset > 0, let validator = resumeData.ifRangeValidator {
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            request.setValue(validator, forHTTPHeaderField: "If-Range")
        }
        return request
    }

    static func isRangeField(_ name: String) -> Bool {
        let lowercased = name.lowercased()
        return lowercased == "range" || lowercased == "if-range"
    }
}

/// Resume data that cannot be decoded: the download fails with
/// `AFError.sessionTaskFailed(error: URLError(.cannotDecodeRawData))`, as URLSession's does.
struct UndecodableResumeData: URLRequestConvertible {
    func asURLRequest() throws -> URLRequest {
        throw AFError.sessionTaskFailed(error: URLError(.cannotDecodeRawData, userInfo: [
            NSLocalizedDescriptionKey: "The resume data could not be decoded.",
        ]))
    }
}
