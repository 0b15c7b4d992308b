#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers

/// Why a request does not want the response of its exchange read right now.
struct ReadPauseReason: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    /// `suspend()` was called.
    static let suspended = ReadPauseReason(rawValue: 1 << 0)
    /// An `onHTTPResponse` handler has the response head and has not answered.
    static let responseHandler = ReadPauseReason(rawValue: 1 << 1)
    /// A redirect handler has the 3xx response and has not answered.
    static let redirectHandler = ReadPauseReason(rawValue: 1 << 2)
    /// The stream handlers of a `DataStreamRequest` are behind.
    static let streamConsumer = ReadPauseReason(rawValue: 1 << 3)
    /// The file writer of a `DownloadRequest` is behind.
    static let diskWriter = ReadPauseReason(rawValue: 1 << 4)

    /// Reasons that belong to one exchange hop and end with it: what they wait for concerns the
    /// hop's response only. The others belong to the request and carry over to the next hop.
    static let hopScoped: ReadPauseReason = [.responseHandler, .redirectHandler, .diskWriter]
}

/// The one owner of a request's read demand: a set of named pause reasons. The exchange is told
/// `pauseReading()` when the set becomes non-empty and `resumeReading()` when it is empty again,
/// strictly alternating, so that the transport needs a paused flag and nothing more.
///
/// Reasons change on many threads (the event loop, the caller, handler queues, the file writer).
/// The calls to the transport happen outside the lock, made by one thread at a time (the
/// "applier"): a thread that changes the set while another applies leaves the call to it, and the
/// applier checks the set again after each call. A change made on the applier's own thread from
/// inside one of its calls (a transport that delivers held events from `resumeReading()`) is
/// applied at once, so that a pause from an event callback takes effect before the next event.
final class ReadDemand: Sendable {
    private let state = NIOLockedValueBox(ReadDemandState())

    /// The pause reasons in force.
    var reasons: ReadPauseReason { state.withLockedValue { $0.reasons } }

    /// Adds `reason`; with `task`, only while that task is the exchange in force (a late answer of
    /// an earlier hop's handler changes nothing).
    func add(_ reason: ReadPauseReason, ifTask task: (any TransportTask)? = nil) {
        record(reason, present: true, ifTask: task)
        settle()
    }

    /// Removes `reason`; with `task`, only while that task is the exchange in force.
    func remove(_ reason: ReadPauseReason, ifTask task: (any TransportTask)? = nil) {
        record(reason, present: false, ifTask: task)
        settle()
    }

    /// Adds or removes `reason` without calling the transport, for a caller that decides inside
    /// a critical section of its own (so that two decisions cannot reach the set in the wrong
    /// order); it calls `settle()` once it has left that section.
    func record(_ reason: ReadPauseReason, present: Bool, ifTask task: (any TransportTask)? = nil) {
        state.withLockedValue { state in
            if present {
                state.add(reason, ifTask: task)
            } else {
                state.remove(reason, ifTask: task)
            }
        }
    }

    /// `task` is the exchange in force (a new hop): it is paused at once when a reason is in force.
    func attach(_ task: any TransportTask) {
        let changed = state.withLockedValue { $0.attach(task) }
        if changed { settle() }
    }

    /// `task` ended: it is told nothing more, and the reasons of its hop end with it.
    func detach(_ task: any TransportTask) {
        state.withLockedValue { $0.detach(task) }
    }

    /// Makes the calls that bring the exchange in line with the reasons (see the type's comment).
    func settle() {
        let thread = ReadDemandState.currentThread()
        var isOutermost: Bool?
        while true {
            let step = state.withLockedValue { state -> ReadDemandState.Step? in
                if isOutermost == nil {
                    guard let role = state.enter(thread: thread) else { return nil }
                    isOutermost = role == .outermost
                }
                return state.nextStep(leaving: isOutermost == true)
            }
            guard let step else { return }
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
    /// The thread making calls to the task, if any.
    private(set) var applier: UInt?

    enum Step {
        case pause(any TransportTask)
        case resume(any TransportTask)
    }

    enum Role: Equatable {
        /// This thread makes the calls, and stops being the applier when the task is in line.
        case outermost
        /// This thread is already the applier, inside one of its own calls.
        case nested
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

    /// Returns whether `newTask` was not the task in force already.
    mutating func attach(_ newTask: any TransportTask) -> Bool {
        guard task !== newTask else { return false }
        task = newTask
        isTaskPaused = false
        return true
    }

    mutating func detach(_ ended: any TransportTask) {
        guard task === ended else { return }
        task = nil
        isTaskPaused = false
        reasons.subtract(.hopScoped)
    }

    /// A thread wants to bring the task in line: nil when another thread is the applier (it will
    /// see the change after its current call).
    mutating func enter(thread: UInt) -> Role? {
        guard let applier else {
            self.applier = thread
            return .outermost
        }
        return applier == thread ? .nested : nil
    }

    /// The next call to make, or nil when the task is in line (an outermost applier then stops
    /// being the applier).
    mutating func nextStep(leaving isOutermost: Bool) -> Step? {
        let wantsPause = !reasons.isEmpty
        guard let task, wantsPause != isTaskPaused else {
            if isOutermost { applier = nil }
            return nil
        }
        isTaskPaused = wantsPause
        return wantsPause ? .pause(task) : .resume(task)
    }

    /// An identifier of the calling thread.
    static func currentThread() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
