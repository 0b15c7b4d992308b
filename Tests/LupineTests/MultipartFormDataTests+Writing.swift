import Foundation
import Testing
@testable import Lupine

extension MultipartFormDataTests {
    // MARK: - Writing to a file

    @Test func writeEncodedDataProducesTheSameBytesAsEncode() throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent("photo.jpg")
            try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) }).write(to: fileURL)
            let makeForm = {
                let form = MultipartFormData(boundary: "same")
                form.append(Self.bytes("text"), withName: "t")
                form.append(fileURL, withName: "photo")
                form.append(InputStream(data: Self.bytes("tail")), withLength: 4, headers: ["Content-Disposition": "form-data; name=\"x\""])
                return form
            }
            let output = directory.appendingPathComponent("body.multipart")

            try makeForm().writeEncodedData(to: output)

            #expect(try Data(contentsOf: output) == makeForm().encode())
        }
    }

    /// Alamofire's `testWritingEncodedStreamBodyPartToDiskRespectingBodyLength`: a stream of
    /// 41,646 bytes declared as 20,823 is written with exactly its first 20,823 bytes.
    @Test func writeEncodedDataWritesExactlyTheDeclaredBytesOfALongerStream() throws {
        try Self.withTemporaryDirectory { directory in
            let source = Data((0..<41_646).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let declared = UInt64(source.count / 2)
            let form = MultipartFormData(boundary: "exact")
            form.append(InputStream(data: source), withLength: declared, name: "unicorn", fileName: "unicorn.png", mimeType: "image/png")
            let output = directory.appendingPathComponent("body.multipart")

            try form.writeEncodedData(to: output)

            var expected = Data("--exact\r\n".utf8)
            expected.append(Data("Content-Disposition: form-data; name=\"unicorn\"; filename=\"unicorn.png\"\r\nContent-Type: image/png\r\n\r\n".utf8))
            expected.append(source.prefix(Int(declared)))
            expected.append(Data("\r\n--exact--\r\n".utf8))
            #expect(try Data(contentsOf: output) == expected)
        }
    }

    @Test func writeEncodedDataWritesExactlyTheDeclaredBytesOfALongerFile() throws {
        try Self.withTemporaryDirectory { directory in
            let fileURL = directory.appendingPathComponent("grows.bin")
            try Self.bytes("abc").write(to: fileURL)
            let form = MultipartFormData(boundary: "file")
            form.append(fileURL, withName: "f", fileName: "f.bin", mimeType: "application/octet-stream")
            try Data(repeating: 0x61, count: 3 * MultipartFormData.streamChunkSize).write(to: fileURL)
            let output = directory.appendingPathComponent("body.multipart")

            try form.writeEncodedData(to: output)

            let written = try Data(contentsOf: output)
            #expect(String(decoding: written, as: UTF8.self).hasSuffix("\r\n\r\naaa\r\n--file--\r\n"))
        }
    }

    @Test func writeEncodedDataFailsOnAStreamShorterThanDeclared() throws {
        try Self.withTemporaryDirectory { directory in
            let form = MultipartFormData()
            form.append(InputStream(data: Self.bytes("four")), withLength: 10, name: "s", fileName: "s.txt", mimeType: "text/plain")
            let output = directory.appendingPathComponent("short.multipart")

            var thrown: (any Error)?
            do { try form.writeEncodedData(to: output) } catch { thrown = error }

            let mismatch = Self.lengthMismatch(in: thrown)
            #expect(mismatch?.bytesExpected == 10)
            #expect(mismatch?.bytesRead == 4)
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }

    @Test func writeEncodedDataRefusesAnExistingFileAndLeavesItAlone() throws {
        try Self.withTemporaryDirectory { directory in
            let output = directory.appendingPathComponent("exists.bin")
            try Self.bytes("keep me").write(to: output)
            let form = MultipartFormData()
            form.append(Self.bytes("x"), withName: "x")

            #expect {
                try form.writeEncodedData(to: output)
            } throws: { error in
                if case let .outputStreamFileAlreadyExists(reported)? = Self.reason(of: error) { reported == output } else { false }
            }
            #expect(try Data(contentsOf: output) == Self.bytes("keep me"))
        }
    }

    @Test func writeEncodedDataRefusesANonFileURL() throws {
        let url = try #require(URL(string: "https://example.com/upload-\(UUID().uuidString)"))
        let form = MultipartFormData()
        form.append(Self.bytes("x"), withName: "x")

        #expect {
            try form.writeEncodedData(to: url)
        } throws: { error in
            if case let .outputStreamURLInvalid(reported)? = Self.reason(of: error) { reported == url } else { false }
        }
    }

    @Test func writeEncodedDataIntoAMissingDirectoryGivesOutputStreamCreationFailed() throws {
        try Self.withTemporaryDirectory { directory in
            let output = directory.appendingPathComponent("no-such-dir/out.bin")
            let form = MultipartFormData()
            form.append(Self.bytes("x"), withName: "x")

            #expect {
                try form.writeEncodedData(to: output)
            } throws: { error in
                if case let .outputStreamCreationFailed(reported)? = Self.reason(of: error) { reported == output } else { false }
            }
        }
    }

    #if os(Linux)
    @Test func writeFailureGivesOutputStreamWriteFailed() throws {
        // /dev/full accepts the open and fails every write with ENOSPC.
        let handle = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? handle.close() }
        let form = MultipartFormData()
        form.append(Self.bytes("x"), withName: "x")

        #expect {
            try form.write(to: handle)
        } throws: { error in
            if case .outputStreamWriteFailed? = Self.reason(of: error) { true } else { false }
        }
    }
    #endif

    @Test func failureMidWriteRemovesThePartialFile() throws {
        try Self.withTemporaryDirectory { directory in
            let output = directory.appendingPathComponent("partial.bin")
            let form = MultipartFormData()
            form.append(Data(count: 100_000), withName: "before")
            form.append(InputStream(data: Self.bytes("short")), withLength: 50, name: "s", fileName: "s.txt", mimeType: "text/plain")

            #expect(Self.lengthMismatch(in: Result { try form.writeEncodedData(to: output) }.failure) != nil)
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }

    #if os(Linux)
    @Test func largeFilePartIsWrittenWithBoundedMemory() throws {
        try Self.withTemporaryDirectory { directory in
            // Resident memory is the whole process's, and other suites run alongside (bodies of
            // 100 MiB among them): growth is held to three quarters of the part, which reading the
            // part whole would exceed whatever else runs, and which the others' noise does not
            // (up to ~25 MB seen, then 66 MB in one full run, which failed a bound of half).
            let size = 128 * 1024 * 1024
            let input = directory.appendingPathComponent("large.bin")
            try Self.writePatternFile(at: input, size: size)
            let form = MultipartFormData(boundary: "big")
            form.append(input, withName: "large")
            let output = directory.appendingPathComponent("large.multipart")

            let peakWasReset = Self.resetPeakResidentSize()
            let before = try #require(Self.residentBytes("VmRSS"))
            try form.writeEncodedData(to: output)
            let after = try #require(Self.residentBytes(peakWasReset ? "VmHWM" : "VmRSS"))

            let growth = after > before ? after - before : 0
            #expect(growth < UInt64(size / 4 * 3), "resident memory grew by \(growth) bytes")

            let header = Self.bytes("--big\r\nContent-Disposition: form-data; name=\"large\"; filename=\"large.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n")
            let trailer = Self.bytes("\r\n--big--\r\n")
            let attributes = try FileManager.default.attributesOfItem(atPath: output.path)
            #expect((attributes[.size] as? NSNumber)?.intValue == header.count + size + trailer.count)

            let written = try FileHandle(forReadingFrom: output)
            defer { try? written.close() }
            #expect(try written.read(upToCount: header.count) == header)
            try written.seek(toOffset: UInt64(header.count + size - 4))
            #expect(try written.readToEnd() == Self.patternTail(size: size) + trailer)
        }
    }
    #endif

    // MARK: - Upload body

    @Test func smallFormIsUploadedFromMemory() throws {
        try Self.withTemporaryDirectory { directory in
            let form = MultipartFormData(boundary: "b")
            form.append(Self.bytes("small"), withName: "s")

            let encoded = try form.encodedUploadable(threshold: MultipartFormData.encodingMemoryThreshold, temporaryDirectory: directory)

            guard case let .data(data) = encoded else {
                Issue.record("expected a body in memory")
                return
            }
            #expect(data == (try form.encode()))
        }
    }

    @Test func formAtTheThresholdIsUploadedFromATemporaryFile() throws {
        try Self.withTemporaryDirectory { directory in
            let temporary = directory.appendingPathComponent("nested/multipart")
            let makeForm = {
                let form = MultipartFormData(boundary: "b")
                form.append(Data(count: 64), withName: "s")
                return form
            }

            let encoded = try makeForm().encodedUploadable(threshold: 64, temporaryDirectory: temporary)

            guard case let .file(fileURL, shouldRemove) = encoded else {
                Issue.record("expected a body in a file")
                return
            }
            #expect(shouldRemove)
            #expect(fileURL.deletingLastPathComponent().standardizedFileURL.path == temporary.standardizedFileURL.path)
            #expect(try Data(contentsOf: fileURL) == makeForm().encode())
        }
    }

    // MARK: - Large-file helpers

    /// One MiB of varied bytes; the large file repeats it.
    static let patternChunk = Data((0..<(1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) })

    static func patternTail(size: Int) -> Data {
        patternChunk.suffix(4)
    }

    /// Writes `size` bytes (a multiple of one MiB) made of `patternChunk` repeated.
    static func writePatternFile(at url: URL, size: Int) throws {
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        for _ in 0..<(size / patternChunk.count) {
            try handle.write(contentsOf: patternChunk)
        }
    }

    /// Resets VmHWM to the current resident size (Linux `clear_refs` value 5).
    static func resetPeakResidentSize() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }
}

private extension Result where Failure == any Error {
    var failure: (any Error)? {
        if case let .failure(error) = self { error } else { nil }
    }
}
