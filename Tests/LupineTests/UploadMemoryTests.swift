import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

extension TransferSuites {
    @Suite struct UploadMemoryTests {
        /// The 1 GiB figures come from `Scripts/measure-memory.sh`; this is the same bound at a size
        /// a test run can afford.
        @Test func fileUploadOf256MiBKeepsResidentMemoryGrowthUnder32MiB() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let size: UInt64 = 256 << 20
            let fileURL = scratch.file("large.bin")
            // Sparse: costs no disk, yet every byte is read and sent.
            #expect(FileManager.default.createFile(atPath: fileURL.path, contents: nil))
            let handle = try FileHandle(forWritingTo: fileURL)
            try handle.truncate(atOffset: size)
            try handle.close()
            _ = await AF.upload(Data(count: 1 << 20), to: server.url("/upload")).serializingData().response
            let before = residentMemoryBytes()

            let report = try await AF.upload(fileURL, to: server.url("/upload"))
                .serializingDecodable(SinkReport.self).value
            let after = residentMemoryBytes()

            #expect(UInt64(report.bytes) == size)
            #expect(report.contentLength == String(size))
            if let before, let after {
                print("UploadMemoryTests: 256 MiB upload grew resident memory by \((after - before) >> 10) KiB")
                #expect(after - before < 32 << 20)
            }
        }
    }
}
