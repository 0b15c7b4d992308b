import Foundation
@testable import Lupine
import NIOCore

/// An `EngineClock` whose time moves only when a test advances it: timers armed by the engine
/// (or a Session's retry delays) fire when `advance(by:)` passes their deadline, so timeout and
/// backoff tests never sleep. The delays asked for are recorded.
final class ManualEngineClock: EngineClock, @unchecked Sendable {
    private struct Timer {
        let id: Int
        let deadline: NIODeadline
        let eventLoop: any EventLoop
        let task: @Sendable () -> Void
        let promise: EventLoopPromise<Void>
    }

    private let lock = NSLock()
    private let start = NIODeadline.now()
    private var offset = TimeAmount.zero
    private var timers: [Timer] = []
    private var nextID = 0
    private var sent = 0
    private var requestedDelays: [TimeInterval] = []
    private let firesImmediately: Bool

    /// With `firesImmediately`, a timer fires as soon as it is armed, time jumping to its deadline.
    init(firesImmediately: Bool = false) {
        self.firesImmediately = firesImmediately
    }

    /// Every delay asked for (deadline minus the time then), in seconds, in order.
    var delays: [TimeInterval] { lock.withLock { requestedDelays } }

    /// Requests the Sessions made by `Session.onManualClock` have sent (head and body written).
    ///
    /// A test waits for this, not for the server to see the request, before moving time: the
    /// engine notes the activity of a write when it completes, which may come after the server
    /// has read the bytes.
    var requestsSent: Int { lock.withLock { sent } }

    func noteRequestSent() {
        lock.withLock { sent += 1 }
    }

    var now: NIODeadline { lock.withLock { start + offset } }

    func schedule(on eventLoop: any EventLoop, at deadline: NIODeadline,
                  _ task: @escaping @Sendable () -> Void) -> Scheduled<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        let id = lock.withLock { () -> Int in
            let delay = deadline - (start + offset)
            requestedDelays.append(Double(delay.nanoseconds) / 1e9)
            nextID += 1
            timers.append(Timer(id: nextID, deadline: deadline, eventLoop: eventLoop, task: task, promise: promise))
            return nextID
        }
        if firesImmediately { advance(by: max(.zero, deadline - now)) }
        return Scheduled(promise: promise, cancellationTask: { [weak self] in
            self?.lock.withLock { self?.timers.removeAll { $0.id == id } }
            promise.fail(EventLoopError.cancelled)
        })
    }

    /// Moves time forward by `amount` and runs, on their event loops, the timers now due.
    func advance(by amount: TimeAmount) {
        let due = lock.withLock { () -> [Timer] in
            offset = offset + amount
            let now = start + offset
            let due = timers.filter { $0.deadline <= now }
            timers.removeAll { $0.deadline <= now }
            return due
        }
        for timer in due {
            timer.eventLoop.execute {
                timer.task()
                timer.promise.succeed()
            }
        }
    }

    deinit {
        // Timers that never fired (a resource deadline days away) are cancelled, as an event
        // loop cancels its scheduled tasks when it shuts down.
        for timer in timers { timer.promise.fail(EventLoopError.cancelled) }
    }

    /// Timers armed and not yet fired or cancelled, due within `interval` from now.
    func pendingTimers(dueWithin interval: TimeAmount) -> Int {
        lock.withLock {
            let limit = start + offset + interval
            return timers.filter { $0.deadline <= limit }.count
        }
    }

    /// Waits (in real time, polling) until at least `count` timers are due within `interval`.
    /// Returns false if that does not happen within `patience`, so a test fails instead of hanging.
    func waitForTimers(_ count: Int = 1, dueWithin interval: TimeAmount, patience: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + patience
        while pendingTimers(dueWithin: interval) < count {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}

extension Session {
    /// A Session on a `ConnectionEngine` whose timers follow `clock`.
    static func onManualClock(_ clock: ManualEngineClock, configuration: URLSessionConfiguration = .af.default,
                              serverTrustManager: ServerTrustManager? = nil,
                              adjust: (inout ConnectionEngine.Configuration) -> Void = { _ in }) -> Session {
        var engineConfiguration = ConnectionEngine.Configuration(sessionConfiguration: configuration)
        engineConfiguration.clock = clock
        adjust(&engineConfiguration)
        let monitor = ClosureEventMonitor()
        monitor.requestDidSendURLRequest = { _, _ in clock.noteRequestSent() }
        let session = Session(transport: ConnectionEngine(configuration: engineConfiguration), configuration: configuration,
                              serverTrustManager: serverTrustManager, eventMonitors: [monitor])
        session.clock = clock
        return session
    }
}
