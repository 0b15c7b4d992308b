import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// Request bodies through the engine's `Transport` interface: streamed with backpressure, so a
/// peer that stops reading holds the producer back and memory stays bounded.
@Suite struct EngineBodyTests {
    /// Records what one exchange reports.
    final class Recorder: TransportEvents, @unchecked Sendable {
        private let lock = NSLock()
        private var sent: Int64 = 0
        private var completion: URLError??
        private var head: TransportResponseHead?
        private var body = Data()

        var bytesSent: Int64 { lock.withLock { sent } }
        var isComplete: Bool { lock.withLock { completion != nil } }
        var error: URLError? { lock.withLock { completion ?? nil } }
        var statusCode: Int? { lock.withLock { head?.statusCode } }
        var received: Data { lock.withLock { body } }

        func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {
            lock.withLock { sent = totalBytesSent }
        }

        func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {
            lock.withLock { self.head = head }
        }

        func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
            lock.withLock { body.append(bodyPart) }
        }

        func transportDidComplete(_ task: any TransportTask, error: URLError?) {
            lock.withLock { completion = .some(error) }
        }
    }

    /// Counts the chunks a streamed body produced.
    final class Producer: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        let chunkSize = 64 * 1024
        let limit: Int

        init(limit: Int) {
            self.limit = limit
        }

        var produced: Int { lock.withLock { count } }

        func next() -> Data? {
            lock.withLock {
                guard count < limit else { return nil }
                count += 1
                return Data(repeating: UInt8(truncatingIfNeeded: count), count: chunkSize)
            }
        }
    }

    /// Polls `value` until it stops changing for a while: the producer is held back.
    private func settledValue(_ value: @Sendable () -> Int) async -> Int {
        var last = -1
        var unchangedPolls = 0
        for _ in 0..<500 where unchangedPolls < 20 {
            let now = value()
            unchangedPolls = now == last ? unchangedPolls + 1 : 0
            last = now
            try? await Task.sleep(for: .milliseconds(20))
        }
        return last
    }

    @Test func streamedBodyToAPeerThatStopsReadingHoldsTheProducerBack() async throws {
        let server = try await LupineSilentServer.start(readsRequests: false)
        let engine = ConnectionEngine()
        // Up to 1 GiB; a producer never held back would run far past the bound below.
        let producer = Producer(limit: 16 * 1024)
        let recorder = Recorder()
        let request = TransportRequest(url: URL(string: "http://127.0.0.1:\(server.port)/upload")!, method: .post,
                                       headerFields: [], body: .stream(length: nil) { producer.next() }, idleTimeout: 600)
        let task = engine.execute(request, events: recorder)
        #expect(await waitUntil { producer.produced > 0 })
        let produced = await settledValue { producer.produced }
        let bytes = produced * producer.chunkSize

        // The socket's buffers on both sides, two chunks on their way and one being made.
        #expect(bytes < 24 << 20, "\(bytes >> 10) KiB produced for a peer that reads nothing")
        #expect(recorder.isComplete == false)
        task.cancel()
        #expect(await waitUntil { recorder.isComplete })
        #expect(recorder.error?.code == .cancelled)
        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }
        try await server.shutdown()
    }

    @Test func streamedBodyArrivesWholeAndInOrder() async throws {
        let server = try await testServer()
        let engine = ConnectionEngine()
        let producer = Producer(limit: 48)
        let recorder = Recorder()
        let request = TransportRequest(url: URL(string: server.url("/upload"))!, method: .post,
                                       headerFields: [], body: .stream(length: nil) { producer.next() })
        _ = engine.execute(request, events: recorder)
        #expect(await waitUntil(timeout: 30) { recorder.isComplete })

        #expect(recorder.error == nil)
        #expect(recorder.statusCode == 200)
        let report = try JSONDecoder().decode(SinkReport.self, from: recorder.received)
        #expect(report.bytes == 48 * producer.chunkSize)
        #expect(recorder.bytesSent == Int64(48 * producer.chunkSize))
        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }
    }

    @Test func producerFailureFailsTheExchangeAndTheConnectionIsNotReused() async throws {
        let server = try await LupineTestServer.start()
        let engine = ConnectionEngine()
        let recorder = Recorder()
        let calls = Locked(0)
        let request = TransportRequest(url: URL(string: server.url("/upload"))!, method: .post, headerFields: [],
                                       body: .stream(length: nil) {
                                           let call = calls.withValue { value -> Int in
                                               value += 1
                                               return value
                                           }
                                           if call == 3 { throw URLError(.cannotOpenFile) }
                                           return Data(count: 1024)
                                       })
        _ = engine.execute(request, events: recorder)
        #expect(await waitUntil { recorder.isComplete })

        #expect(recorder.error?.code == .cannotOpenFile)
        let session = Session(transport: engine)
        #expect(await session.performsNormalRequest(on: server))
        #expect(server.acceptedConnections == 2)
        try await server.shutdown()
    }

    @Test func fileBodyThatCannotBeReadFailsWithCannotOpenFile() async throws {
        let server = try await testServer()
        let session = Session()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-missing-\(UUID().uuidString)")
        let response = await session.upload(missing, to: server.url("/upload")).serializingData().response

        #expect(response.error != nil)
        #expect(response.response == nil)
    }
}
