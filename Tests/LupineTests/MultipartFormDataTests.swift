import Foundation
import Testing
@testable import Lupine
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Serialized so that the memory-bound test measures this suite alone.
@Suite(.serialized) struct MultipartFormDataTests {
    // MARK: - Support

    /// A fresh temporary directory, removed when `body` returns.
    static func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("lupine-multipart-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }

    static func bytes(_ text: String) -> Data {
        Data(text.utf8)
    }

    /// The reason of a `.multipartEncodingFailed` error, or nil for any other error.
    static func reason(of error: any Error) -> AFError.MultipartEncodingFailureReason? {
        guard case let .multipartEncodingFailed(reason)? = error as? AFError else { return nil }
        return reason
    }

    /// The error `encode()` throws, if any.
    static func encodingError(_ form: MultipartFormData) -> (any Error)? {
        do {
            _ = try form.encode()
            return nil
        } catch {
            return error
        }
    }

    /// The length mismatch wrapped in an `.inputStreamReadFailed` error, if that is what `error` is.
    static func lengthMismatch(in error: (any Error)?) -> AFError.UnexpectedInputStreamLength? {
        guard let error, case let .inputStreamReadFailed(inner)? = reason(of: error) else { return nil }
        return inner as? AFError.UnexpectedInputStreamLength
    }

    static func residentBytes(_ field: String) -> UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("\(field):") {
            let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first
            return kilobytes.flatMap { UInt64($0) }.map { $0 * 1024 }
        }
        return nil
    }

    // MARK: - Wire format

    @Test func dataPartWithoutFileNameOrMimeTypeHasOnlyAContentDisposition() throws {
        let form = MultipartFormData(boundary: "b0undary")
        form.append(Self.bytes("Lupine"), withName: "library")

        let expected = "--b0undary\r\n"
            + "Content-Disposition: form-data; name=\"library\"\r\n\r\n"
            + "Lupine"
            + "\r\n--b0undary--\r\n"
        #expect(try form.encode() == Self.bytes(expected))
    }

    @Test func dataPartsWithFileNameAndMimeTypeAreSeparatedByEncapsulatedBoundaries() throws {
        let form = MultipartFormData(boundary: "xyz")
        form.append(Self.bytes("one"), withName: "first")
        form.append(Data([0x89, 0x50, 0x4E, 0x47]), withName: "avatar", fileName: "me.png", mimeType: "image/png")
        form.append(Self.bytes("three"), withName: "third", fileName: "t.txt")
        form.append(Self.bytes("{}"), withName: "fourth", mimeType: "application/json")

        var expected = Self.bytes("--xyz\r\nContent-Disposition: form-data; name=\"first\"\r\n\r\none")
        expected += Self.bytes("\r\n--xyz\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"me.png\"\r\n")
        expected += Self.bytes("Content-Type: image/png\r\n\r\n")
        expected += Data([0x89, 0x50, 0x4E, 0x47])
        expected += Self.bytes("\r\n--xyz\r\nContent-Disposition: form-data; name=\"third\"; filename=\"t.txt\"\r\n\r\nthree")
        expected += Self.bytes("\r\n--xyz\r\nContent-Disposition: form-data; name=\"fourth\"\r\n")
        expected += Self.bytes("Content-Type: application/json\r\n\r\n{}")
        expected += Self.bytes("\r\n--xyz--\r\n")
        #expect(try form.encode() == expected)
    }

    @Test func emptyDataPartStillWritesItsHeaders() throws {
        let form = MultipartFormData(boundary: "b")
        form.append(Data(), withName: "empty")

        #expect(try form.encode() == Self.bytes("--b\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n\r\n--b--\r\n"))
    }

    @Test func formWithoutPartsEncodesToNothing() throws {
        let form = MultipartFormData()

        #expect(try form.encode().isEmpty)
        #expect(form.contentLength == 0)
    }

    @Test func filePartTakesItsFileNameAndMimeTypeFromTheURL() throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent("report.json")
            try Self.bytes("{\"ok\":true}").write(to: fileURL)
            let form = MultipartFormData(boundary: "b")
            form.append(fileURL, withName: "report")

            let expected = "--b\r\n"
                + "Content-Disposition: form-data; name=\"report\"; filename=\"report.json\"\r\n"
                + "Content-Type: application/json\r\n\r\n"
                + "{\"ok\":true}"
                + "\r\n--b--\r\n"
            #expect(try form.encode() == Self.bytes(expected))
            #expect(form.contentLength == 11)
        }
    }

    @Test func filePartWithExplicitFileNameAndMimeTypeUsesThem() throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent("data.bin")
            try Data([1, 2, 3]).write(to: fileURL)
            let form = MultipartFormData(boundary: "b")
            form.append(fileURL, withName: "blob", fileName: "renamed.dat", mimeType: "application/x-custom")

            var expected = Self.bytes("--b\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"renamed.dat\"\r\n")
            expected += Self.bytes("Content-Type: application/x-custom\r\n\r\n")
            expected += Data([1, 2, 3])
            expected += Self.bytes("\r\n--b--\r\n")
            #expect(try form.encode() == expected)
        }
    }

    @Test(arguments: [
        ("photo.PNG", "image/png"), ("a.jpg", "image/jpeg"), ("a.jpeg", "image/jpeg"), ("notes.txt", "text/plain"),
        ("page.html", "text/html"), ("style.css", "text/css"), ("app.js", "text/javascript"),
        ("feed.xml", "application/xml"), ("table.csv", "text/csv"), ("doc.pdf", "application/pdf"),
        ("anim.gif", "image/gif"), ("pic.webp", "image/webp"), ("logo.svg", "image/svg+xml"),
        ("song.mp3", "audio/mpeg"), ("clip.mp4", "video/mp4"), ("clip.mov", "video/quicktime"),
        ("sound.wav", "audio/wav"), ("pack.zip", "application/zip"), ("pack.gz", "application/gzip"),
        ("pack.tar", "application/x-tar"), ("mystery.qqq", "application/octet-stream"),
    ])
    func mimeTypeIsInferredFromTheExtension(fileName: String, mimeType: String) throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent(fileName)
            try Data([0]).write(to: fileURL)
            let form = MultipartFormData(boundary: "b")
            form.append(fileURL, withName: "file")

            let encoded = String(decoding: try form.encode(), as: UTF8.self)
            #expect(encoded.contains("filename=\"\(fileName)\"\r\nContent-Type: \(mimeType)\r\n\r\n"))
        }
    }

    @Test func streamPartWithFileNameAndMimeTypeIsWrittenLikeAFilePart() throws {
        let body = Self.bytes("streamed bytes")
        let form = MultipartFormData(boundary: "b")
        form.append(InputStream(data: body), withLength: UInt64(body.count), name: "log", fileName: "log.txt", mimeType: "text/plain")

        let expected = "--b\r\n"
            + "Content-Disposition: form-data; name=\"log\"; filename=\"log.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\n"
            + "streamed bytes"
            + "\r\n--b--\r\n"
        #expect(try form.encode() == Self.bytes(expected))
    }

    @Test func streamPartWithCustomHeadersWritesThemInInsertionOrder() throws {
        let body = Self.bytes("payload")
        let headers: HTTPHeaders = [
            HTTPHeader(name: "X-Zeta", value: "last-alphabetically"),
            HTTPHeader(name: "Content-Disposition", value: "form-data; name=\"custom\""),
            HTTPHeader(name: "Content-Transfer-Encoding", value: "binary"),
        ]
        let form = MultipartFormData(boundary: "b")
        form.append(InputStream(data: body), withLength: UInt64(body.count), headers: headers)

        let expected = "--b\r\n"
            + "X-Zeta: last-alphabetically\r\n"
            + "Content-Disposition: form-data; name=\"custom\"\r\n"
            + "Content-Transfer-Encoding: binary\r\n\r\n"
            + "payload"
            + "\r\n--b--\r\n"
        #expect(try form.encode() == Self.bytes(expected))
    }

    @Test func largeStreamPartIsReadCompletelyAcrossChunks() throws {
        let body = Data((0..<(MultipartFormData.streamChunkSize * 3 + 17)).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let form = MultipartFormData(boundary: "b")
        form.append(InputStream(data: body), withLength: UInt64(body.count), name: "big", fileName: "big.bin", mimeType: "application/octet-stream")

        let encoded = try form.encode()
        let header = Self.bytes("--b\r\nContent-Disposition: form-data; name=\"big\"; filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n")
        #expect(encoded == header + body + Self.bytes("\r\n--b--\r\n"))
    }

    // MARK: - Metadata

    @Test func contentLengthIsTheSumOfDeclaredBodyLengths() throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent("f.txt")
            try Data(count: 1000).write(to: fileURL)
            let form = MultipartFormData()
            form.append(Data(count: 10), withName: "a")
            form.append(fileURL, withName: "f")
            form.append(InputStream(data: Data(count: 5)), withLength: 5, name: "s", fileName: "s.bin", mimeType: "x/y")
            form.append(InputStream(data: Data()), withLength: 42, headers: [:])

            #expect(form.contentLength == 10 + 1000 + 5 + 42)
        }
    }

    @Test func generatedBoundaryHasAlamofiresFormatAndDiffersBetweenForms() {
        let first = MultipartFormData().boundary
        let second = MultipartFormData().boundary

        for boundary in [first, second] {
            #expect(boundary.hasPrefix("alamofire.boundary."))
            let digits = boundary.dropFirst("alamofire.boundary.".count)
            #expect(digits.count == 16)
            #expect(digits.allSatisfy { "0123456789abcdef".contains($0) })
        }
        #expect(first != second)
    }

    @Test func contentTypeNamesTheBoundaryAndCanBeReplaced() {
        let form = MultipartFormData(boundary: "given")
        #expect(form.boundary == "given")
        #expect(form.contentType == "multipart/form-data; boundary=given")

        form.contentType = "multipart/mixed; boundary=given"
        #expect(form.contentType == "multipart/mixed; boundary=given")
    }

    // MARK: - Append errors

    @Test func nonFileURLGivesBodyPartURLInvalid() throws {
        let url = try #require(URL(string: "https://example.com/a.png"))
        let form = MultipartFormData()
        form.append(url, withName: "remote")

        guard case let .bodyPartURLInvalid(reported)? = Self.encodingError(form).flatMap(Self.reason) else {
            Issue.record("expected bodyPartURLInvalid")
            return
        }
        #expect(reported == url)
        #expect(form.contentLength == 0)
    }

    @Test(arguments: ["noextension", ""])
    func urlWithoutFileNameOrExtensionGivesBodyPartFilenameInvalid(path: String) throws {
        let url = URL(fileURLWithPath: "/tmp").appendingPathComponent(path)
        let form = MultipartFormData()
        form.append(url, withName: "file")

        guard case .bodyPartFilenameInvalid(let reported)? = Self.encodingError(form).flatMap(Self.reason) else {
            Issue.record("expected bodyPartFilenameInvalid")
            return
        }
        #expect(reported == url)
    }

    @Test func directoryGivesBodyPartFileIsDirectory() throws {
        try Self.withTemporaryDirectory { directory in
            let folder = directory.appendingPathComponent("folder.d")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            let form = MultipartFormData()
            form.append(folder, withName: "dir")

            guard case let .bodyPartFileIsDirectory(reported)? = Self.encodingError(form).flatMap(Self.reason) else {
                Issue.record("expected bodyPartFileIsDirectory")
                return
            }
            #expect(reported == folder)
        }
    }

    @Test func missingFileGivesBodyPartFileIsDirectoryAsAlamofireOnLinux() throws {
        try Self.withTemporaryDirectory { directory in
            let missing = directory.appendingPathComponent("missing.txt")
            let form = MultipartFormData()
            form.append(missing, withName: "file", fileName: "missing.txt", mimeType: "text/plain")

            guard case let .bodyPartFileIsDirectory(reported)? = Self.encodingError(form).flatMap(Self.reason) else {
                Issue.record("expected bodyPartFileIsDirectory, as Alamofire on Linux reports a missing file")
                return
            }
            #expect(reported == missing)
        }
    }

    @Test func unreadableSizeGivesBodyPartFileSizeNotAvailable() throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent("a.txt")
            try Data([1]).write(to: fileURL)
            let form = MultipartFormData(fileManager: AttributeFailingFileManager(throwsOnQuery: false))
            form.append(fileURL, withName: "file")

            guard case let .bodyPartFileSizeNotAvailable(reported)? = Self.encodingError(form).flatMap(Self.reason) else {
                Issue.record("expected bodyPartFileSizeNotAvailable")
                return
            }
            #expect(reported == fileURL)
        }
    }

    @Test func failingSizeQueryGivesBodyPartFileSizeQueryFailedWithError() throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent("a.txt")
            try Data([1]).write(to: fileURL)
            let form = MultipartFormData(fileManager: AttributeFailingFileManager(throwsOnQuery: true))
            form.append(fileURL, withName: "file")

            let error = Self.encodingError(form).flatMap(Self.reason)
            guard case let .bodyPartFileSizeQueryFailedWithError(reported, underlying)? = error else {
                Issue.record("expected bodyPartFileSizeQueryFailedWithError")
                return
            }
            #expect(reported == fileURL)
            #expect((underlying as? CocoaError)?.code == .fileReadNoPermission)
        }
    }

    #if os(Linux)
    @Test func fileThatCannotBeOpenedGivesBodyPartInputStreamCreationFailed() throws {
        try Self.withTemporaryDirectory { directory in
            // A bound UNIX socket exists and has a size, but open(2) refuses it (even for root).
            let socketURL = directory.appendingPathComponent("s.sock")
            let descriptor = try #require(UnixSocket.bind(at: socketURL.path))
            defer { close(descriptor) }
            let form = MultipartFormData()
            form.append(socketURL, withName: "socket")

            guard case let .bodyPartInputStreamCreationFailed(reported)? = Self.encodingError(form).flatMap(Self.reason) else {
                Issue.record("expected bodyPartInputStreamCreationFailed")
                return
            }
            #expect(reported == socketURL)
        }
    }
    #endif

    @Test func firstAppendErrorWinsAndFailedPartsAreLeftOut() throws {
        let remote = try #require(URL(string: "https://example.com/a.png"))
        let form = MultipartFormData()
        form.append(Self.bytes("ok"), withName: "fine")
        form.append(URL(fileURLWithPath: "/tmp/noextension"), withName: "first")
        form.append(remote, withName: "second")

        #expect(form.contentLength == 2)
        guard case .bodyPartFilenameInvalid? = Self.encodingError(form).flatMap(Self.reason) else {
            Issue.record("expected the first error, bodyPartFilenameInvalid")
            return
        }
    }

    @Test func writeEncodedDataThrowsTheRecordedAppendErrorAndCreatesNoFile() throws {
        try Self.withTemporaryDirectory { directory in
            let form = MultipartFormData()
            form.append(directory, withName: "dir", fileName: "dir.bin", mimeType: "application/octet-stream")
            let output = directory.appendingPathComponent("out.bin")

            #expect {
                try form.writeEncodedData(to: output)
            } throws: { error in
                if case .bodyPartFileIsDirectory? = Self.reason(of: error) { true } else { false }
            }
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }

    // MARK: - Stream errors

    @Test func streamShorterThanDeclaredFailsWithUnexpectedInputStreamLength() {
        let form = MultipartFormData()
        form.append(InputStream(data: Self.bytes("four")), withLength: 10, name: "s", fileName: "s.txt", mimeType: "text/plain")

        let mismatch = Self.lengthMismatch(in: Self.encodingError(form))
        #expect(mismatch?.bytesExpected == 10)
        #expect(mismatch?.bytesRead == 4)
    }

    @Test func streamLongerThanDeclaredFailsWithUnexpectedInputStreamLength() {
        let body = Data(count: MultipartFormData.streamChunkSize + 100)
        let form = MultipartFormData()
        form.append(InputStream(data: body), withLength: 3, headers: ["Content-Disposition": "form-data; name=\"s\""])

        let mismatch = Self.lengthMismatch(in: Self.encodingError(form))
        #expect(mismatch?.bytesExpected == 3)
        #expect(mismatch?.bytesRead == UInt64(body.count))
    }

    @Test func streamIsReadOnlySoASecondEncodingFails() throws {
        let form = MultipartFormData()
        form.append(InputStream(data: Self.bytes("once")), withLength: 4, name: "s", fileName: "s.txt", mimeType: "text/plain")

        _ = try form.encode()
        let error = try #require(Self.encodingError(form))
        guard case .inputStreamReadFailed? = Self.reason(of: error) else {
            Issue.record("expected inputStreamReadFailed, got \(error)")
            return
        }
    }

    @Test func streamReadErrorGivesInputStreamReadFailed() {
        let form = MultipartFormData()
        form.append(FailingInputStream(data: Data()), withLength: 1, name: "s", fileName: "s.bin", mimeType: "x/y")

        let error = Self.encodingError(form)
        guard let error, case let .inputStreamReadFailed(inner)? = Self.reason(of: error) else {
            Issue.record("expected inputStreamReadFailed")
            return
        }
        #expect(!(inner is AFError.UnexpectedInputStreamLength))
    }

    @Test func fileChangedAfterAppendFailsWithUnexpectedInputStreamLength() throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent("grows.txt")
            try Self.bytes("abc").write(to: fileURL)
            let form = MultipartFormData()
            form.append(fileURL, withName: "file")
            try Self.bytes("abcdef").write(to: fileURL)

            let mismatch = Self.lengthMismatch(in: Self.encodingError(form))
            #expect(mismatch?.bytesExpected == 3)
            #expect(mismatch?.bytesRead == 6)
        }
    }
}

// MARK: - Test doubles

/// A file manager whose attribute queries either throw or return no size.
private final class AttributeFailingFileManager: FileManager, @unchecked Sendable {
    private let throwsOnQuery: Bool

    init(throwsOnQuery: Bool) {
        self.throwsOnQuery = throwsOnQuery
        super.init()
    }

    override func attributesOfItem(atPath path: String) throws -> [FileAttributeKey: Any] {
        if throwsOnQuery { throw CocoaError(.fileReadNoPermission) }
        return [:]
    }
}

/// A stream whose every read fails.
private final class FailingInputStream: InputStream {
    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        -1
    }
}

private enum UnixSocket {
    /// Binds a UNIX-domain socket at `path`, creating the socket file; returns its descriptor.
    static func bind(at path: String) -> Int32? {
        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { raw -> Bool in
            guard pathBytes.count < raw.count else { return false }
            raw.copyBytes(from: pathBytes)
            return true
        }
        let bound = fits && withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        guard bound else {
            close(descriptor)
            return nil
        }
        return descriptor
        #else
        return nil
        #endif
    }
}
