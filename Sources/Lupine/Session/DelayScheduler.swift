import Dispatch
import Foundation

/// Runs work after a delay: how Session waits before a `.retryWithDelay` retry, and how time-based
/// policies read the clock. Tests substitute a scheduler that does not sleep for real.
protocol DelayScheduler: Sendable {
    /// The current time.
    var now: Date { get }
    /// Runs `work` on `queue` once `delay` seconds have passed.
    func schedule(after delay: TimeInterval, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void)
}

/// Real time: `Date()` and `DispatchQueue.asyncAfter`, which waits without blocking a thread.
struct DispatchDelayScheduler: DelayScheduler {
    var now: Date { Date() }

    func schedule(after delay: TimeInterval, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        guard delay > 0 else {
            queue.async(execute: work)
            return
        }
        queue.asyncAfter(deadline: .now() + delay, execute: work)
    }
}
