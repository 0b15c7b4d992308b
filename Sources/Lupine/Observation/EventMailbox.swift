import Foundation
import NIOConcurrencyHelpers

/// Delivers the events of one monitor on its queue, in order, with as few dispatches as it can.
///
/// Dispatching every event on its own costs a wake-up of the monitor's queue per event (a request
/// has about fifteen), and under load these hand-offs between threads cost more than the events.
/// The mailbox queues events behind one lock and schedules a drain only when none is pending: a
/// burst of events from one step of a request, or events arriving while the queue drains, ride on
/// a dispatch that is already there. Order and the queue are those of one `async` per event.
///
/// A mailbox on a queue that targets the Session's root queue (the default queue of monitors on
/// Linux) delivers an event at once when it is posted from the root queue with nothing pending:
/// the event then runs where it would have run, in the same order, without a wake-up.
final class EventMailbox: Sendable {
    let queue: DispatchQueue
    private let rootQueueRunner: RootQueueRunner?
    private let state = NIOLockedValueBox(State())

    private struct State {
        var pending: [@Sendable () -> Void] = []
        var isDrainScheduled = false
    }

    /// - Parameter rootQueueRunner: Given when `queue` targets that runner's root queue.
    init(queue: DispatchQueue, rootQueueRunner: RootQueueRunner? = nil) {
        self.queue = queue
        self.rootQueueRunner = rootQueueRunner
    }

    /// Runs `event` on `queue` after every event posted before it.
    func post(_ event: @escaping @Sendable () -> Void) {
        // On the root queue, no drain of this mailbox can run meanwhile (it needs the root queue
        // too): with nothing pending or scheduled, the event is next in line.
        let runsNow = rootQueueRunner?.isCurrent ?? false
        let shouldSchedule = state.withLockedValue { state -> Bool? in
            if runsNow, !state.isDrainScheduled { return nil }
            state.pending.append(event)
            guard !state.isDrainScheduled else { return false }
            state.isDrainScheduled = true
            return true
        }
        switch shouldSchedule {
        case nil: event()
        case true?:
            if let rootQueueRunner {
                rootQueueRunner.async(on: queue) { self.drain() }
            } else {
                queue.async { self.drain() }
            }
        case false?: break
        }
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
