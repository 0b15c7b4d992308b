import Synchronization

/// Counts requests per path and accepted connections; read from test threads while event loops write.
final class HitCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    private let connectionCount = Mutex(0)

    func recordConnection() {
        connectionCount.withLock { $0 += 1 }
    }

    var connections: Int {
        connectionCount.withLock { $0 }
    }

    func record(_ path: String) {
        counts.withLock { $0[path, default: 0] += 1 }
    }

    func hits(for path: String) -> Int {
        counts.withLock { $0[path] ?? 0 }
    }
}
