import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// The bytes of a request keep moving while every thread of the cooperative pool is blocked (by
/// other tasks of the process: a synchronous validator on the async API, a caller's own blocking
/// work). A streamed body's producer once ran on the pool: an upload then stood still until the
/// pool freed up, and its idle timer ended it.
@Suite struct CooperativePoolIsolationTests {
    @Test func aFileUploadGoesOnWhileTheCooperativePoolIsBlocked() async throws {
        let server = try await testServer()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-pool-upload-\(UUID().uuidString)")
        let body = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let session = Session()

        let outcome = await PoolBlockade.run {
            let delivered = DispatchSemaphore(value: 0)
            let response = Locked<AFDataResponse<Data>?>(nil)
            session.upload(file, to: server.url("/upload"), requestModifier: { $0.timeoutInterval = 3 })
                .validate()
                .responseData(queue: DispatchQueue(label: "CooperativePoolIsolationTests")) { answer in
                    response.withValue { $0 = answer }
                    delivered.signal()
                }
            let inTime = delivered.wait(timeout: .now() + 4) == .success
            return (inTime, response.current)
        }

        #expect(outcome.blockedThreads >= 1, "no task of the pool could be blocked")
        #expect(outcome.value.0, "the upload did not finish while the pool was blocked")
        let response = try #require(outcome.value.1)
        #expect(response.error == nil, "\(String(describing: response.error))")
        let report = (try? JSONSerialization.jsonObject(with: response.data ?? Data())) as? [String: Any]
        #expect(report?["bytes"] as? Int == body.count)
    }
}

/// Blocks every thread of the cooperative pool while `work` runs on a Dispatch thread, then lets
/// them go.
enum PoolBlockade {
    struct Outcome<Value: Sendable>: Sendable {
        /// How many of the pool's threads were blocked when `work` began.
        let blockedThreads: Int
        let value: Value
    }

    /// Blocks one task per processor (and two more, in case the pool is wider) for 5 s at most,
    /// waits until a processor's worth of them block, runs `work` off the pool, then releases them.
    static func run<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Outcome<Value> {
        let width = ProcessInfo.processInfo.activeProcessorCount
        let blockers = width + 2
        let release = DispatchSemaphore(value: 0)
        let blocked = Locked(0)
        for _ in 0..<blockers {
            Task.detached {
                blocked.withValue { $0 += 1 }
                _ = release.wait(timeout: .now() + 5)
            }
        }
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let deadline = Date().addingTimeInterval(5)
                while blocked.current < width, Date() < deadline {
                    Thread.sleep(forTimeInterval: 0.001)
                }
                let blockedThreads = blocked.current
                let value = work()
                for _ in 0..<blockers { release.signal() }
                continuation.resume(returning: Outcome(blockedThreads: blockedThreads, value: value))
            }
        }
    }
}
