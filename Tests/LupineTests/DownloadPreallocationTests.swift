import Foundation
@testable import Lupine
import LupineTestServer
import Testing

extension TransferSuites {
    /// A download of announced length reserves its file's blocks when the file is opened; what the
    /// body did not fill goes back when the file is closed.
    @Suite struct DownloadPreallocationTests {
        static let size = 4 << 20
        static let cut = 1 << 20

        /// Bytes the file system holds for the file at `path` (its blocks), or nil.
        static func allocatedBytes(_ path: String) -> Int? {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            return Int(status.st_blocks) * 512
        }

        #if os(Linux)
        /// A length no disk here has room for (as a server may announce) reserves nothing; a
        /// plausible one reserves its blocks, past the file's size.
        @Test func onlyPlausibleLengthsAreReserved() throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let path = scratch.file("reserved").path
            let descriptor = open(path, O_CREAT | O_RDWR, 0o600)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            #expect(!FilePreallocation.reserve(descriptor, from: 0, length: Int64.max / 4))
            #expect(Self.allocatedBytes(path) == 0)
            #expect(!FilePreallocation.reserve(descriptor, from: 0, length: FilePreallocation.minimumLength - 1))
            #expect(FilePreallocation.reserve(descriptor, from: 0, length: Int64(Self.size)))
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0)
        }
        #endif

        @Test func aCompleteDownloadHoldsItsBytesAndNoMoreBlocks() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let destination = scratch.file("body")
            let response = await AF.download(server.url("/bytes/\(Self.size)?seed=31"), to: { _, _ in (destination, []) })
                .serializingDownloadedFileURL().response
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 31)))
            let allocated = try #require(Self.allocatedBytes(destination.path))
            #expect(allocated <= Self.size + 64 * 1024)
        }

        /// The server announces 4 MiB and closes after 1: the partial file kept for resuming holds
        /// the blocks of what was written, not of the 4 MiB reserved, and resuming completes it.
        @Test func aCutDownloadKeepsOnlyTheBlocksItWrote() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let first = AF.download(server.url("/bytes/\(Self.size)?seed=32&close-after=\(Self.cut)"))
            let failed = await first.serializingDownloadedFileURL().response
            let resumeData = try #require(failed.error?.downloadResumeData)
            let partial = try #require(temporaryFilesLeft(by: [first]).first)
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(partial).path
            let written = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            let allocated = try #require(Self.allocatedBytes(path))
            #expect(written > 0 && written <= Self.cut)
            #expect(allocated <= written + 64 * 1024)

            let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            let response = await resumed.serializingDownloadedFileURL().response
            #expect(response.response?.statusCode == 206)
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 32)))
            #expect(temporaryFilesLeft(by: [first, resumed]).isEmpty)
        }
    }
}
