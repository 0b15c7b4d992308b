import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import NIOCore
import Testing

/// A large request body in memory goes to the socket from the `Data`'s own bytes, lent to NIO
/// without a copy (`LentDataBuffers`): what arrives is the body, byte for byte, and each loan ends.
@Suite struct LentDataBuffersTests {
    /// Bytes that differ from one position to the next, so that a slice sent twice, out of
    /// order or from the wrong offset changes the hash.
    private func body(count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
    }

    private func upload(_ body: Data, with engine: ConnectionEngine, to server: LupineTestServer) async throws -> SinkReport {
        let recorder = EngineBodyTests.Recorder()
        let request = TransportRequest(url: URL(string: server.url("/upload"))!, method: .post, headerFields: [], body: .data(body))
        _ = engine.execute(request, events: recorder)
        #expect(await waitUntil { recorder.isComplete })
        #expect(recorder.error == nil)
        #expect(recorder.bytesSent == Int64(body.count))
        return try JSONDecoder().decode(SinkReport.self, from: recorder.received)
    }

    @Test func largeDataBodyArrivesWholeAndItsLoanEnds() async throws {
        let server = try await testServer()
        let engine = ConnectionEngine()
        // Neither a multiple of the leading slice nor of a page.
        let body = body(count: 3 * 1024 * 1024 + 4097)
        let report = try await upload(body, with: engine, to: server)

        #expect(report.bytes == body.count)
        #expect(report.sha256 == sha256Hex(body))
        #expect(await waitUntil { !LentDataBuffers.isLent(body) })
        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }
    }

    @Test func oneDataSentByConcurrentExchangesArrivesWholeEachTime() async throws {
        let server = try await testServer()
        let engine = ConnectionEngine()
        let body = body(count: 1024 * 1024 + 1)
        let reports = try await withThrowingTaskGroup(of: SinkReport.self) { group in
            for _ in 0..<4 { group.addTask { try await upload(body, with: engine, to: server) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(reports.count == 4)
        #expect(reports.allSatisfy { $0.bytes == body.count && $0.sha256 == sha256Hex(body) })
        #expect(await waitUntil { !LentDataBuffers.isLent(body) })
        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }
    }

    @Test func dataChangedAfterTheRequestStartedIsSentAsItWas() async throws {
        let server = try await testServer()
        let engine = ConnectionEngine()
        var body = body(count: 2 * 1024 * 1024)
        let original = body
        let recorder = EngineBodyTests.Recorder()
        _ = engine.execute(TransportRequest(url: URL(string: server.url("/upload"))!, method: .post, headerFields: [],
                                            body: .data(body)),
                           events: recorder)
        body.resetBytes(in: 0..<body.count)
        #expect(await waitUntil { recorder.isComplete })

        let report = try JSONDecoder().decode(SinkReport.self, from: recorder.received)
        #expect(report.sha256 == sha256Hex(original))
        #expect(body.allSatisfy { $0 == 0 })
        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }
    }

    @Test func aLentBufferThatGrowsMovesOffTheDataAndEndsTheLoan() throws {
        let data = body(count: 100_000)
        var buffer = try #require(LentDataBuffers.buffer(lending: data))
        #expect(LentDataBuffers.isLent(data))
        #expect(buffer.readableBytesView.elementsEqual(data))

        buffer.writeInteger(UInt8(7))

        #expect(!LentDataBuffers.isLent(data))
        #expect(buffer.readableBytes == data.count + 1)
        #expect(buffer.readableBytesView.prefix(data.count).elementsEqual(data))
        #expect(buffer.readableBytesView.last == 7)
        #expect(data == self.body(count: 100_000))
    }

    @Test func smallDataIsNotLent() {
        #expect(LentDataBuffers.buffer(lending: Data(repeating: 1, count: 64)) == nil)
        #expect(LentDataBuffers.buffer(lending: Data()) == nil)
    }
}
