import NIOCore
import NIOPosix
import Synchronization

/// Notifications held past the root-queue work that posted them, until the Session's next
/// root-queue work ends, and a sweep on an event loop that bounds how long they wait.
///
/// When a task awaiting a response runs the end of its request (`Request.runHandedOverCompletion`),
/// the `didCompleteTask` and `didFinish` notifications would be posted while the task still waits
/// for its value: a caller that starts its next request at once pays for them before that request
/// is sent. Carried, they are posted at the end of the Session's next root-queue work, which for
/// that caller is the setting up of the next request, after it is handed to the transport, while
/// the network works. Alamofire posts them on the monitor's queue, asynchronously too.
///
/// The finished request is kept until then as well, so that it is released there rather than on
/// the awaiting task's way back.
///
/// With no further root-queue work, the sweep posts them: armed from the event loop that handed
/// the end of the exchange over (a timer there costs no wake-up), it checks every
/// `sweepInterval` (4 ms), and when nothing delivered the carried events since it last looked, queues
/// their delivery on the root queue. A notification so waits at most about two intervals.
final class CarriedEvents: Sendable {
    /// How often the sweep looks. Each look re-arms the event loop's timer (a system call of a
    /// few microseconds there), so not much more often than this.
    static let sweepInterval = TimeAmount.milliseconds(4)

    private struct State {
        var mailboxes: [EventMailbox] = []
        var retained: [any AnyObject & Sendable] = []
        var isSweepArmed = false
        /// Deliveries so far, and their number when the sweep last looked.
        var deliveries = 0
        var deliveriesSeenBySweep = 0

        var isEmpty: Bool { mailboxes.isEmpty && retained.isEmpty }
    }

    private let state = Mutex(State())

    /// Arms the sweep, when called on an event loop and not armed already. Events are carried only
    /// while it is armed.
    func armSweep(deliveringWith runner: RootQueueRunner) {
        guard let loop = MultiThreadedEventLoopGroup.currentEventLoop else { return }
        let arms = state.withLock { state -> Bool in
            guard !state.isSweepArmed else { return false }
            state.isSweepArmed = true
            state.deliveriesSeenBySweep = state.deliveries
            return true
        }
        if arms { scheduleSweep(on: loop, runner: runner) }
    }

    /// Takes `mailboxes` (each holding events with a drain owed) and `retained` until the next
    /// delivery; false when no sweep is armed, and the caller delivers them itself.
    func accept(_ mailboxes: [EventMailbox], retaining retained: any AnyObject & Sendable) -> Bool {
        state.withLock { state in
            guard state.isSweepArmed else { return false }
            state.mailboxes.append(contentsOf: mailboxes)
            state.retained.append(retained)
            return true
        }
    }

    /// Posts the carried events and lets the retained objects go. On the root queue.
    func deliver() {
        let (mailboxes, retained) = state.withLock { state -> ([EventMailbox], [any AnyObject & Sendable]) in
            guard !state.isEmpty else { return ([], []) }
            state.deliveries += 1
            defer {
                state.mailboxes.removeAll(keepingCapacity: true)
                state.retained.removeAll(keepingCapacity: true)
            }
            return (state.mailboxes, state.retained)
        }
        for mailbox in mailboxes { mailbox.drainHeld() }
        withExtendedLifetime(retained) {}
    }

    private func scheduleSweep(on loop: any EventLoop, runner: RootQueueRunner) {
        let sweep = loop.scheduleTask(in: Self.sweepInterval) { self.sweep(on: loop, runner: runner) }
        // An event loop shut down before the sweep ran: nothing would look again.
        sweep.futureResult.whenFailure { _ in
            self.state.withLock { $0.isSweepArmed = false }
            runner.async { self.deliver() }
        }
    }

    private func sweep(on loop: any EventLoop, runner: RootQueueRunner) {
        enum Next { case disarm, deliver, lookAgain }
        let next = state.withLock { state -> Next in
            if state.isEmpty {
                state.isSweepArmed = false
                return .disarm
            }
            if state.deliveries == state.deliveriesSeenBySweep {
                state.isSweepArmed = false
                return .deliver
            }
            state.deliveriesSeenBySweep = state.deliveries
            return .lookAgain
        }
        switch next {
        case .disarm: break
        case .deliver: runner.async { self.deliver() }
        case .lookAgain: scheduleSweep(on: loop, runner: runner)
        }
    }
}
