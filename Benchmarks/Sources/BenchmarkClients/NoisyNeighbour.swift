import Foundation
import Lupine

/// S8, the noisy neighbour (issue #37): Session B sends 2,000 sequential small GETs and reports
/// their latency alone, then beside Session A, which keeps 16 requests in flight whose `validate`
/// closures each block for 50 ms. With the event loops moving bytes only, A's blocked closures
/// (on A's queues) cost B nothing: the target is B's p99 beside A at most 1.5x its p99 alone.
///
/// Both Sessions share the engine's event loops (`MultiThreadedEventLoopGroup.singleton`), as two
/// services in one server process would.
public enum NoisyNeighbour {
    /// How B waits for each response.
    public enum API: String, CaseIterable, Sendable {
        /// `response { }`, a completion handler on the Session's queue.
        case closure
        /// `serializingData().response`, awaited.
        case async
    }

    /// B's latencies, sorted.
    public struct Latencies: Sendable {
        public let sorted: [Duration]

        public func percentile(_ fraction: Double) -> Duration {
            guard !sorted.isEmpty else { return .zero }
            let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))
            return sorted[index]
        }
    }

    /// Requests A keeps in flight, and how long each of its validators blocks.
    public static let neighbourRequests = 16
    public static let neighbourBlock: TimeInterval = 0.05

    /// Runs B's GETs of `baseURL/bytes/64` with `api`, beside A when `withNeighbour`.
    public static func run(baseURL: String, api: API, withNeighbour: Bool, scale: Double) async throws -> Latencies {
        let count = max(1, Int(2000 * scale))
        let neighbour = withNeighbour ? Neighbour(url: "\(baseURL)/bytes/64") : nil
        await neighbour?.start()
        defer { neighbour?.stop() }
        let session = Session()
        let url = "\(baseURL)/bytes/64"
        // Warm-up: the connection, and the first request's one-time costs.
        _ = try await session.request(url).validate().serializingData().value
        let clock = ContinuousClock()
        var latencies: [Duration] = []
        latencies.reserveCapacity(count)
        for _ in 0..<count {
            let start = clock.now
            switch api {
            case .closure:
                let failure: AFError? = await withCheckedContinuation { continuation in
                    session.request(url).validate().responseData { continuation.resume(returning: $0.error) }
                }
                if let failure { throw failure }
            case .async:
                _ = try await session.request(url).validate().serializingData().value
            }
            latencies.append(clock.now - start)
        }
        withExtendedLifetime(session) {}
        return Latencies(sorted: latencies.sorted())
    }

    /// Session A: `neighbourRequests` loops, each sending its next request when the last ended,
    /// each request's validator blocking `neighbourBlock` seconds.
    final class Neighbour: @unchecked Sendable {
        private let url: String
        private let session = Session()
        private let running = NSLock()
        private var isRunning = true
        private var started = 0
        private let firstBlocks = DispatchSemaphore(value: 0)

        init(url: String) { self.url = url }

        /// Starts the loops and returns once one validator has blocked.
        func start() async {
            for _ in 0..<NoisyNeighbour.neighbourRequests { next() }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    self.firstBlocks.wait()
                    continuation.resume()
                }
            }
        }

        func stop() {
            running.withLock { isRunning = false }
        }

        private func next() {
            guard running.withLock({ isRunning }) else { return }
            session.request(url)
                .validate { [self] _, _, _ in
                    let isFirst = running.withLock { () -> Bool in
                        started += 1
                        return started == 1
                    }
                    if isFirst { firstBlocks.signal() }
                    Thread.sleep(forTimeInterval: NoisyNeighbour.neighbourBlock)
                    return .success(())
                }
                .responseData { [self] _ in next() }
        }
    }
}
