import Foundation
@testable import Lupine

/// A `DelayScheduler` whose time moves only when the test says so: delayed work runs at once
/// (or when `advance` passes its due time) and the delays asked for are recorded.
final class ManualDelayScheduler: DelayScheduler, @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSinceReferenceDate: 0)
    private var requestedDelays: [TimeInterval] = []
    private let runsImmediately: Bool
    private var pending: [(due: Date, queue: DispatchQueue, work: @Sendable () -> Void)] = []

    /// With `runsImmediately`, scheduled work runs at once (and the clock jumps by its delay).
    init(runsImmediately: Bool = true) { self.runsImmediately = runsImmediately }

    var now: Date { lock.withLock { current } }

    /// Every delay asked for, in order.
    var delays: [TimeInterval] { lock.withLock { requestedDelays } }

    func schedule(after delay: TimeInterval, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let runNow = lock.withLock { () -> Bool in
            requestedDelays.append(delay)
            if runsImmediately {
                current += delay
                return true
            }
            pending.append((current + delay, queue, work))
            return false
        }
        if runNow { queue.async(execute: work) }
    }

    /// Moves the clock forward and runs what became due.
    func advance(by interval: TimeInterval) {
        let due = lock.withLock { () -> [(due: Date, queue: DispatchQueue, work: @Sendable () -> Void)] in
            current += interval
            let due = pending.filter { $0.due <= current }
            pending.removeAll { $0.due <= current }
            return due
        }
        due.forEach { $0.queue.async(execute: $0.work) }
    }
}
