import Synchronization

/// Counts requests per path; read from test threads while event loops write.
final class HitCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func record(_ path: String) {
        counts.withLock { $0[path, default: 0] += 1 }
    }

    func hits(for path: String) -> Int {
        counts.withLock { $0[path] ?? 0 }
    }
}
