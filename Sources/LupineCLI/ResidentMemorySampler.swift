import Foundation

/// Samples the process's resident set size while a transfer runs, and keeps the peak.
final class ResidentMemorySampler: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var isRunning = true
    private let interval: TimeInterval

    init(interval: TimeInterval = 0.02) {
        self.interval = interval
    }

    /// The current resident set size (`VmRSS` of /proc/self/status) in bytes, nil where unavailable.
    static func current() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
    }

    /// Starts sampling on a background thread until `stop()`.
    func start() {
        let thread = Thread { [self] in
            while lock.withLock({ isRunning }) {
                if let now = Self.current() { lock.withLock { peak = max(peak, now) } }
                Thread.sleep(forTimeInterval: interval)
            }
        }
        thread.start()
    }

    /// Stops sampling and returns the highest resident set size seen.
    func stop() -> Int {
        lock.withLock {
            isRunning = false
            return max(peak, Self.current() ?? 0)
        }
    }
}
