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
///
/// A mailbox that `holdsUntilWorkEnds` (AlamofireNotifications') does not deliver at once from
/// inside the runner's counted work: it holds the event, and the runner drains it when that work
/// ends (`RootQueueRunner.drainWhenWorkEnds(_:)`), or carries it further (`CarriedEvents`). Events
/// posted meanwhile queue behind it, in order.
final class EventMailbox: Sendable {
    let queue: DispatchQueue
    private let rootQueueRunner: RootQueueRunner?
    private let holdsUntilWorkEnds: Bool
    private let state = NIOLockedValueBox(State())

    private struct State {
        var pending: [@Sendable () -> Void] = []
        var isDrainScheduled = false
    }

    /// - Parameters:
    ///   - rootQueueRunner: Given when `queue` targets that runner's root queue.
    ///   - holdsUntilWorkEnds: Whether events posted from the runner's counted work wait for its end.
    init(queue: DispatchQueue, rootQueueRunner: RootQueueRunner? = nil, holdsUntilWorkEnds: Bool = false) {
        self.queue = queue
        self.rootQueueRunner = rootQueueRunner
        self.holdsUntilWorkEnds = holdsUntilWorkEnds && rootQueueRunner != nil
    }

    /// Runs `deliver(payload)` on `queue` after every event posted before it.
    ///
    /// An event delivered at once costs no allocation when `deliver` captures nothing: the
    /// closure that queues the payload with it is made only when the event has to wait.
    func post<Payload: Sendable>(_ payload: Payload, _ deliver: @escaping @Sendable (Payload) -> Void) {
        if runsAtOnce() {
            deliver(payload)
        } else {
            enqueue { deliver(payload) }
        }
    }

    /// Whether an event posted now is next in line on the calling thread: on the root queue, no
    /// drain of this mailbox can run meanwhile (it needs the root queue too), so with nothing
    /// pending or scheduled it is. A post from another thread after this answer comes after the
    /// event in order, as it would have.
    ///
    /// A mailbox that holds its events answers false from inside counted work: the first event
    /// held there makes the drain owed to the end of that work.
    func runsAtOnce() -> Bool {
        guard let rootQueueRunner, rootQueueRunner.isCurrent else { return false }
        guard holdsUntilWorkEnds, rootQueueRunner.runsCountedWorkOnThisThread else {
            return state.withLockedValue { !$0.isDrainScheduled }
        }
        let holds = state.withLockedValue { state -> Bool in
            guard !state.isDrainScheduled else { return false }
            state.isDrainScheduled = true
            return true
        }
        if holds { rootQueueRunner.drainWhenWorkEnds(self) }
        return false
    }

    /// Delivers the events held for the runner (see `runsAtOnce()`), and those queued behind them.
    /// On the root queue.
    func drainHeld() {
        drain()
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
            for event in batch { event() }
        }
    }
}
