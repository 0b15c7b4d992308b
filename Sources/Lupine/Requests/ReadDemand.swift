import Foundation

/// Why a request does not want the response of its exchange read right now.
struct ReadPauseReason: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    /// `suspend()` was called.
    static let suspended = ReadPauseReason(rawValue: 1 << 0)
    /// An `onHTTPResponse` handler has the response head and has not answered.
    static let responseHandler = ReadPauseReason(rawValue: 1 << 1)
    /// A redirect handler has the 3xx response and has not answered.
    static let redirectHandler = ReadPauseReason(rawValue: 1 << 2)
    /// The stream handlers of a `DataStreamRequest`, or the message handlers and streams of a
    /// `WebSocketRequest`, are behind.
    static let streamConsumer = ReadPauseReason(rawValue: 1 << 3)
    /// The file writer of a `DownloadRequest` is behind.
    static let diskWriter = ReadPauseReason(rawValue: 1 << 4)
    /// The Session's queue decides what the response head means (a redirect, a challenge, a
    /// revalidation) before any of the body goes anywhere.
    static let headDecision = ReadPauseReason(rawValue: 1 << 5)

    /// Reasons that belong to one exchange hop and end with it: what they wait for concerns the
    /// hop's response only. The others belong to the request and carry over to the next hop.
    static let hopScoped: ReadPauseReason = [.responseHandler, .redirectHandler, .diskWriter, .headDecision]
}

/// The one owner of a request's read demand: a set of named pause reasons. The exchange is told
/// `pauseReading()` when the set becomes non-empty and `resumeReading()` when it is empty again,
/// strictly alternating, so that the transport needs a paused flag and nothing more.
///
/// Reasons change on many threads (the event loop, the caller, handler queues, the file writer).
/// The calls to the transport are made under the same lock as the bookkeeping, so they reach the
/// transport in the order the set changed, and a pause asked for on any thread has reached the
/// transport when the call that asked returns. Leaving the call to whichever thread was making
/// one, as this type once did, let an event loop deliver megabytes past a stream consumer's pause
/// while that thread waited to be scheduled. The lock is recursive: a transport that delivers
/// held events from inside `resumeReading()` may see a pause asked for by one of them at once.
/// Lupine's transports return from both calls without waiting.
final class ReadDemand: @unchecked Sendable {
    /// Guards `state` and orders the calls to the task.
    private let lock = ReentrantLock()
    private var state = ReadDemandState()

    /// The pause reasons in force.
    var reasons: ReadPauseReason { lock.withLock { state.reasons } }

    /// Adds `reason`; with `task`, only while that task is the exchange in force (a late answer of
    /// an earlier hop's handler changes nothing).
    func add(_ reason: ReadPauseReason, ifTask task: (any TransportTask)? = nil) {
        lock.withLock {
            state.add(reason, ifTask: task)
            applySteps()
        }
    }

    /// Removes `reason`; with `task`, only while that task is the exchange in force.
    func remove(_ reason: ReadPauseReason, ifTask task: (any TransportTask)? = nil) {
        lock.withLock {
            state.remove(reason, ifTask: task)
            applySteps()
        }
    }

    /// Adds or removes `reason` without calling the transport, for a caller that decides inside
    /// a critical section of its own (so that two decisions cannot reach the set in the wrong
    /// order); it calls `settle()` once it has left that section.
    func record(_ reason: ReadPauseReason, present: Bool, ifTask task: (any TransportTask)? = nil) {
        lock.withLock {
            if present {
                state.add(reason, ifTask: task)
            } else {
                state.remove(reason, ifTask: task)
            }
        }
    }

    /// `task`, the exchange of hop `hop`, is in force: it is paused at once when a reason is in
    /// force. Nothing happens when that hop or a later one has ended, or a later hop is attached.
    func attach(_ task: any TransportTask, hop: Int) {
        lock.withLock {
            if state.attach(task, hop: hop) { applySteps() }
        }
    }

    /// `task`, the exchange of hop `hop`, ended: it is told nothing more, and the reasons of its
    /// hop end with it. Also when it was not attached yet: a later `attach` of it does nothing.
    func detach(_ task: any TransportTask, hop: Int) {
        lock.withLock { state.detach(task, hop: hop) }
    }

    /// Makes the calls that bring the exchange in line with the reasons.
    func settle() {
        lock.withLock { applySteps() }
    }

    /// Under the lock: one call per change of the task's paused state, until it is in line (a call
    /// made from inside another, on this thread, may change the set again).
    private func applySteps() {
        while let step = state.nextStep() {
            switch step {
            case let .pause(task): task.pauseReading()
            case let .resume(task): task.resumeReading()
            }
        }
    }
}

/// The bookkeeping of `ReadDemand`, without the calls: tested on its own.
struct ReadDemandState {
    private(set) var reasons: ReadPauseReason = []
    /// The exchange in force, and what it was last told.
    private(set) var task: (any TransportTask)?
    private(set) var isTaskPaused = false
    /// The hop of the last exchange attached, and the last hop that ended (hops of a request are
    /// numbered in order, and one ends before the next starts). An exchange may end before the
    /// request attaches it (a transport that fails inside `execute`, or on another thread before
    /// `execute` has returned): attached then, it would be held, and the request with it, for good.
    private(set) var attachedHop = 0
    private(set) var endedHop = 0

    enum Step {
        case pause(any TransportTask)
        case resume(any TransportTask)
    }

    private func isCurrent(_ candidate: (any TransportTask)?) -> Bool {
        guard let candidate else { return true }
        return task === candidate
    }

    mutating func add(_ reason: ReadPauseReason, ifTask candidate: (any TransportTask)? = nil) {
        guard isCurrent(candidate) else { return }
        reasons.formUnion(reason)
    }

    mutating func remove(_ reason: ReadPauseReason, ifTask candidate: (any TransportTask)? = nil) {
        guard isCurrent(candidate) else { return }
        reasons.subtract(reason)
    }

    /// A new exchange, not told anything yet; false when `newTask` already is the one in force,
    /// or when its hop has ended or is older than the one in force.
    mutating func attach(_ newTask: any TransportTask, hop: Int) -> Bool {
        guard task !== newTask, hop > endedHop, hop >= attachedHop else { return false }
        task = newTask
        attachedHop = hop
        isTaskPaused = false
        return true
    }

    mutating func detach(_ ended: any TransportTask, hop: Int) {
        endedHop = max(endedHop, hop)
        guard task === ended else { return }
        task = nil
        isTaskPaused = false
        reasons.subtract(.hopScoped)
    }

    /// The call that brings the task in line with the reasons, recorded as made; nil when it is.
    mutating func nextStep() -> Step? {
        let wantsPause = !reasons.isEmpty
        guard let task, wantsPause != isTaskPaused else { return nil }
        isTaskPaused = wantsPause
        return wantsPause ? .pause(task) : .resume(task)
    }
}
