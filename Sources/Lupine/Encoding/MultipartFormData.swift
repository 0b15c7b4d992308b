import Foundation

/// Builds a `multipart/form-data` body (RFC 7578) from data, files and streams.
///
/// Parts are written in the order they were appended:
///
/// ```swift
/// let form = MultipartFormData()
/// form.append(Data("Lupine".utf8), withName: "library")
/// form.append(Data([0x89, 0x50]), withName: "avatar", fileName: "avatar.png", mimeType: "image/png")
/// let body = try form.encode()
/// ```
///
/// The `append` methods never throw: the first problem they find (a missing file, a directory, a
/// URL that is not a file URL, ...) is recorded, the part is left out, and `encode()` or
/// `writeEncodedData(to:)` throws it. File and stream parts are read in chunks, never whole, when
/// the body is encoded.
///
/// An instance is not `Sendable`; build and encode it on one task or queue.
open class MultipartFormData {
    /// Bodies whose `contentLength` is at least this many bytes are encoded to a temporary file
    /// when uploaded, smaller ones in memory.
    public static let encodingMemoryThreshold: UInt64 = 10_000_000

    /// The value for the request's `Content-Type` header: `multipart/form-data; boundary=<boundary>`.
    ///
    /// Computed on first use from `boundary`; it can be replaced.
    open lazy var contentType: String = "multipart/form-data; boundary=\(self.boundary)"

    /// The sum of the declared body lengths of all parts, in bytes.
    ///
    /// Boundaries and part header fields are not included.
    public var contentLength: UInt64 {
        bodyParts.reduce(0) { $0 + $1.bodyContentLength }
    }

    /// The string that separates the parts.
    ///
    /// Unless one is given to `init(fileManager:boundary:)`, it is `alamofire.boundary.` followed
    /// by 16 random lowercase hexadecimal digits (the format Alamofire uses, kept so that servers
    /// and tests that recognise it keep working).
    public let boundary: String

    /// Checks files when they are appended, and removes a partly written file after a failure.
    let fileManager: FileManager

    /// The parts, in the order they were appended.
    private(set) var bodyParts: [MultipartBodyPart] = []

    /// The first problem an `append` found; `encode()` and `writeEncodedData(to:)` throw it.
    private(set) var bodyPartError: AFError?

    /// How many bytes of a file or stream part are read at once.
    static let streamChunkSize = 64 * 1024

    /// Creates an empty form.
    ///
    /// - Parameters:
    ///   - fileManager: Used to check appended files and to clean up after a failed write.
    ///     `.default` by default.
    ///   - boundary: The boundary to use; a random `alamofire.boundary.<16 hex digits>` one when
    ///     `nil`.
    public init(fileManager: FileManager = .default, boundary: String? = nil) {
        self.fileManager = fileManager
        self.boundary = boundary ?? MultipartFormData.randomBoundary()
    }

    // MARK: - Appending parts

    /// Appends a part whose body is `data`.
    ///
    /// The part's headers are `Content-Disposition: form-data; name="<name>"`, with
    /// `; filename="<fileName>"` when a file name is given, then `Content-Type: <mimeType>` when a
    /// MIME type is given.
    ///
    /// - Parameters:
    ///   - data: The part's body.
    ///   - name: The form field name.
    ///   - fileName: The file name to announce, if any.
    ///   - mimeType: The part's `Content-Type`, if any.
    public func append(_ data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        let headers = contentHeaders(withName: name, fileName: fileName, mimeType: mimeType)
        bodyParts.append(MultipartBodyPart(headers: headers, source: .data(data), bodyContentLength: UInt64(data.count)))
    }

    /// Appends a part whose body is the content of a file, named after the file.
    ///
    /// The file name announced is the URL's last path component; the `Content-Type` comes from
    /// its extension (`png` gives `image/png`, an unknown one `application/octet-stream`), on Linux
    /// as on Apple platforms. The file is read when the body is encoded.
    ///
    /// A URL without a file name or extension is recorded as
    /// `AFError.MultipartEncodingFailureReason.bodyPartFilenameInvalid(in:)`; other problems as
    /// described in `append(_:withName:fileName:mimeType:)`. The recorded error is thrown by
    /// `encode()` and `writeEncodedData(to:)`.
    ///
    /// - Parameters:
    ///   - fileURL: The file URL of the part's body.
    ///   - name: The form field name.
    public func append(_ fileURL: URL, withName name: String) {
        let fileName = fileURL.lastPathComponent
        let pathExtension = fileURL.pathExtension
        guard !fileName.isEmpty, !pathExtension.isEmpty else {
            recordFailure(.bodyPartFilenameInvalid(in: fileURL))
            return
        }
        let mimeType = MultipartMIMEType.mimeType(forPathExtension: pathExtension)
        append(fileURL, withName: name, fileName: fileName, mimeType: mimeType)
    }

    /// Appends a part whose body is the content of a file, with the given file name and type.
    ///
    /// The file is checked now and read in chunks when the body is encoded. A problem is recorded
    /// (the first one wins), the part is left out, and `encode()` and `writeEncodedData(to:)`
    /// throw `AFError.multipartEncodingFailed` with:
    /// - `.bodyPartURLInvalid(url:)` when `fileURL` is not a file URL;
    /// - `.bodyPartFileIsDirectory(at:)` when it names a directory or nothing at all;
    /// - `.bodyPartFileSizeQueryFailedWithError(forURL:error:)` or
    ///   `.bodyPartFileSizeNotAvailable(at:)` when its size cannot be read;
    /// - `.bodyPartInputStreamCreationFailed(for:)` when it cannot be opened for reading.
    ///
    /// - Parameters:
    ///   - fileURL: The file URL of the part's body.
    ///   - name: The form field name.
    ///   - fileName: The file name to announce.
    ///   - mimeType: The part's `Content-Type`.
    public func append(_ fileURL: URL, withName name: String, fileName: String, mimeType: String) {
        let headers = contentHeaders(withName: name, fileName: fileName, mimeType: mimeType)

        guard fileURL.isFileURL else {
            recordFailure(.bodyPartURLInvalid(url: fileURL))
            return
        }

        // A missing file gets the directory reason, as Alamofire on Linux gives it (the contract,
        // API.md 2.24): its reachability check, which reports `bodyPartFileNotReachable...`, exists
        // only in Apple builds.
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: fileURL.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            recordFailure(.bodyPartFileIsDirectory(at: fileURL))
            return
        }

        let fileSize: UInt64
        do {
            guard let size = try fileManager.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber else {
                recordFailure(.bodyPartFileSizeNotAvailable(at: fileURL))
                return
            }
            fileSize = size.uint64Value
        } catch {
            recordFailure(.bodyPartFileSizeQueryFailedWithError(forURL: fileURL, error: error))
            return
        }

        guard MultipartFileAccess.canOpenForReading(fileURL) else {
            recordFailure(.bodyPartInputStreamCreationFailed(for: fileURL))
            return
        }

        bodyParts.append(MultipartBodyPart(headers: headers, source: .file(fileURL), bodyContentLength: fileSize))
    }

    /// Appends a part whose body is read from a stream, with a file name and type.
    ///
    /// The stream is opened, read in chunks and closed when the body is encoded, so it can be
    /// encoded only once. The part holds exactly `length` bytes, as in Alamofire:
    /// `writeEncodedData(to:)` reads no more than `length` bytes of a longer stream, while
    /// `encode()` reads the whole stream and fails on a longer one. A stream shorter than `length`
    /// fails both. The failure is `AFError.multipartEncodingFailed` with
    /// `.inputStreamReadFailed(error:)` wrapping an `AFError.UnexpectedInputStreamLength`.
    ///
    /// - Parameters:
    ///   - stream: The stream of the part's body.
    ///   - length: The number of bytes the stream yields.
    ///   - name: The form field name.
    ///   - fileName: The file name to announce.
    ///   - mimeType: The part's `Content-Type`.
    public func append(_ stream: InputStream,
                       withLength length: UInt64,
                       name: String,
                       fileName: String,
                       mimeType: String) {
        let headers = contentHeaders(withName: name, fileName: fileName, mimeType: mimeType)
        append(stream, withLength: length, headers: headers)
    }

    /// Appends a part whose body is read from a stream, with header fields of the caller's choice.
    ///
    /// The header fields are written in their order in `headers`. The stream is read as described
    /// in `append(_:withLength:name:fileName:mimeType:)`.
    ///
    /// - Parameters:
    ///   - stream: The stream of the part's body.
    ///   - length: The number of bytes the stream yields.
    ///   - headers: The part's header fields.
    public func append(_ stream: InputStream, withLength length: UInt64, headers: HTTPHeaders) {
        bodyParts.append(MultipartBodyPart(headers: headers, source: .stream(stream), bodyContentLength: length))
    }

    // MARK: - Encoding

    /// Encodes the whole body in memory.
    ///
    /// Prefer `writeEncodedData(to:)` for large bodies: this method holds every byte at once.
    ///
    /// - Returns: The encoded body; empty when there are no parts.
    /// - Throws: `AFError.multipartEncodingFailed` with the first error recorded by an `append`,
    ///   or with `.inputStreamReadFailed(error:)` when a file or stream part cannot be read or
    ///   yields a different number of bytes than it declared.
    public func encode() throws -> Data {
        if let bodyPartError { throw bodyPartError }

        var encoded = Data()
        try writeParts { encoded.append($0) }
        return encoded
    }

    /// Encodes the body into a new file, in chunks, so memory stays bounded whatever the size of
    /// the parts.
    ///
    /// The file must not exist yet. If encoding fails after the file was created, the partly
    /// written file is removed.
    ///
    /// - Parameter fileURL: The file URL to create.
    /// - Throws: `AFError.multipartEncodingFailed` with the first error recorded by an `append`;
    ///   `.outputStreamFileAlreadyExists(at:)` when something exists at `fileURL`;
    ///   `.outputStreamURLInvalid(url:)` when it is not a file URL;
    ///   `.outputStreamCreationFailed(for:)` when the file cannot be created;
    ///   `.outputStreamWriteFailed(error:)` when writing fails; `.inputStreamReadFailed(error:)`
    ///   when a part cannot be read or yields fewer bytes than it declared. A part with more bytes
    ///   than declared is written with exactly the declared bytes.
    public func writeEncodedData(to fileURL: URL) throws {
        if let bodyPartError { throw bodyPartError }

        if fileManager.fileExists(atPath: fileURL.path) {
            throw AFError.multipartEncodingFailed(reason: .outputStreamFileAlreadyExists(at: fileURL))
        }
        guard fileURL.isFileURL else {
            throw AFError.multipartEncodingFailed(reason: .outputStreamURLInvalid(url: fileURL))
        }

        let handle = try MultipartFileAccess.createExclusively(fileURL)

        var failure: (any Error)?
        do {
            try write(to: handle)
        } catch {
            failure = error
        }
        do {
            try handle.close()
        } catch {
            if failure == nil {
                failure = AFError.multipartEncodingFailed(reason: .outputStreamWriteFailed(error: error))
            }
        }

        if let failure {
            try? fileManager.removeItem(at: fileURL)
            throw failure
        }
    }

    // MARK: - Internals

    /// Writes the encoded body to an open file handle, in chunks.
    ///
    /// Write errors become `.outputStreamWriteFailed(error:)`; read errors stay as the parts
    /// report them. Does not check `bodyPartError`.
    func write(to handle: FileHandle) throws {
        try writeParts(readsExactlyDeclaredLengths: true) { chunk in
            do {
                try handle.write(contentsOf: chunk)
            } catch {
                throw AFError.multipartEncodingFailed(reason: .outputStreamWriteFailed(error: error))
            }
        }
    }

    /// Passes the encoded body, boundaries included, to `consume` piece by piece; see
    /// `MultipartBodyPart.writeBody` for `readsExactlyDeclaredLengths`.
    func writeParts(readsExactlyDeclaredLengths: Bool = false, _ consume: (Data) throws -> Void) throws {
        guard !bodyParts.isEmpty else { return }

        let initialBoundary = Data("--\(boundary)\r\n".utf8)
        let encapsulatedBoundary = Data("\r\n--\(boundary)\r\n".utf8)
        let finalBoundary = Data("\r\n--\(boundary)--\r\n".utf8)

        for (index, part) in bodyParts.enumerated() {
            try consume((index == 0 ? initialBoundary : encapsulatedBoundary) + part.encodedHeaders)
            try part.writeBody(chunkSize: Self.streamChunkSize, readsExactlyDeclaredLength: readsExactlyDeclaredLengths, to: consume)
        }
        try consume(finalBoundary)
    }

    /// The `Content-Disposition` (and, with a MIME type, `Content-Type`) fields of a part.
    ///
    /// A `"` in the name or file name is written as `%22` (with CR and LF, see `MultipartBodyPart`),
    /// as browsers do, so it cannot end the quoted string early.
    func contentHeaders(withName name: String, fileName: String? = nil, mimeType: String? = nil) -> HTTPHeaders {
        var disposition = "form-data; name=\"\(Self.escapingQuotes(name))\""
        if let fileName {
            disposition += "; filename=\"\(Self.escapingQuotes(fileName))\""
        }
        var headers: HTTPHeaders = [HTTPHeader(name: "Content-Disposition", value: disposition)]
        if let mimeType {
            headers.add(HTTPHeader(name: "Content-Type", value: mimeType))
        }
        return headers
    }

    private static func escapingQuotes(_ text: String) -> String {
        // By scalar: a quote followed by a combining mark is one Character, but still a quote on the wire.
        guard text.utf8.contains(UInt8(ascii: "\"")) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\"" { escaped.append(contentsOf: "%22".unicodeScalars) } else { escaped.append(scalar) }
        }
        return String(escaped)
    }

    /// Records an `append` problem unless an earlier one was recorded.
    private func recordFailure(_ reason: AFError.MultipartEncodingFailureReason) {
        guard bodyPartError == nil else { return }
        bodyPartError = .multipartEncodingFailed(reason: reason)
    }

    /// `alamofire.boundary.` followed by 16 random lowercase hexadecimal digits.
    static func randomBoundary() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16, uppercase: false)
        return "alamofire.boundary." + String(repeating: "0", count: 16 - digits.count) + digits
    }
}
