import Foundation
import NIOConcurrencyHelpers

/// Delivers the events of one monitor on its queue, in order, with as few dispatches as it can.
///
/// Dispatching every event on its own costs a wake-up of the monitor's queue per event (a request
/// has about fifteen), and under load these hand-offs between threads cost more than the events.
/// The mailbox queues events behind one lock and schedules a drain only when none is pending: a
/// burst of events from one step of a request, or events arriving while the queue drains, ride on
/// a dispatch that is already there. Order and the queue are those of one `async` per event.
final class EventMailbox: Sendable {
    let queue: DispatchQueue
    private let state = NIOLockedValueBox(State())

    private struct State {
        var pending: [@Sendable () -> Void] = []
        var isDrainScheduled = false
    }

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Runs `event` on `queue` after every event posted before it.
    func post(_ event: @escaping @Sendable () -> Void) {
        let shouldSchedule = state.withLockedValue { state -> Bool in
            state.pending.append(event)
            guard !state.isDrainScheduled else { return false }
            state.isDrainScheduled = true
            return true
        }
        if shouldSchedule { queue.async { self.drain() } }
    }

    private func drain() {
        while true {
            let batch = state.withLockedValue { state -> [@Sendable () -> Void] in
                if state.pending.isEmpty { state.isDrainScheduled = false }
                defer { state.pending.removeAll(keepingCapacity: true) }
                return state.pending
            }
            guard !batch.isEmpty else { return }
            for event in batch { event() }
        }
    }
}
