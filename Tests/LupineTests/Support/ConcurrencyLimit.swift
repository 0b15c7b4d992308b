/// Lets at most `limit` operations run at once; the others wait in line. The fault matrix runs its
/// cells through one, so that its servers, TLS handshakes and uploads do not starve the suites
/// running beside it.
actor ConcurrencyLimit {
    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ limit: Int) {
        self.limit = limit
    }

    /// Runs `operation` once a place is free.
    func run<T: Sendable>(_ operation: @Sendable () async throws -> T) async rethrows -> T {
        if running < limit {
            running += 1
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
        defer {
            if waiting.isEmpty {
                running -= 1
            } else {
                waiting.removeFirst().resume()
            }
        }
        return try await operation()
    }
}
