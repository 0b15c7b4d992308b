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

    /// Runs `deliver(payload)` on `queue` after every event posted before it.
    ///
    /// An event delivered at once costs no allocation when `deliver` captures nothing: the
    /// closure that queues the payload with it is made only when the event has to wait.
    func post<Payload: Sendable>(_ payload: Payload, _ deliver: @escaping @Sendable (Payload) -> Void) {
        if runsAtOnce() {
            ThreadContract.userCode("an event monitor")
            deliver(payload)
        } else {
            enqueue { deliver(payload) }
        }
    }

    /// Whether an event posted now is next in line on the calling thread: on the root queue, no
    /// drain of this mailbox can run meanwhile (it needs the root queue too), so with nothing
    /// pending or scheduled it is. A post from another thread after this answer comes after the
    /// event in order, as it would have.
    func runsAtOnce() -> Bool {
        guard rootQueueRunner?.isCurrent ?? false else { return false }
        return state.withLockedValue { !$0.isDrainScheduled }
    }

    private func enqueue(_ event: @escaping @Sendable () -> Void) {
        let shouldSchedule = state.withLockedValue { state -> Bool in
            state.pending.append(event)
            guard !state.isDrainScheduled else { return false }
            state.isDrainScheduled = true
            return true
        }
        guard shouldSchedule else { return }
        if let rootQueueRunner {
            rootQueueRunner.async(on: queue) { self.drain() }
        } else {
            queue.async { self.drain() }
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
            ThreadContract.userCode("an event monitor")
            for event in batch { event() }
        }
    }
}
