#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Runs a Session's work on its root queue with as few thread hand-offs as the queue contract
/// allows.
///
/// Work dispatched to a queue wakes another thread; under load these hand-offs cost more than the
/// work. When nothing of Lupine's waits on the root queue, work runs on the calling thread inside
/// `rootQueue.sync`, which is "on the root queue" for everything that asks (queue-specific values,
/// ordering with the queue's other work) and costs no wake-up. When work is queued there, it is
/// queued behind it, so the caller never blocks behind other requests' work, and order holds.
///
/// An event loop never enters the root queue this way: root-queue work runs user code
/// (validators, serializers, monitors), and a loop must not run it nor wait for it (the thread
/// contract); work asked for on a loop is queued. The main queue is never entered synchronously:
/// nothing inside Lupine waits on it. Nor is a root queue entered from inside another Session's
/// root-queue work (a monitor of one Session starting a request on another): two Sessions doing
/// so at once would each wait for the other.
final class RootQueueRunner: Sendable {
    /// Marks the root queues of Sessions, so that work already running there is not dispatched again.
    private static let key = DispatchSpecificKey<RootQueueMarker>()

    /// The Session's root queue.
    let queue: DispatchQueue
    /// Enters `queue` synchronously, and queues work there, without `DispatchQueue`'s allocations.
    let entry: SerialQueueEntry
    private let marker = RootQueueMarker()
    /// Lupine's work dispatched to the root queue (or a queue targeting it) and not finished, and
    /// synchronous runs in progress.
    private let outstanding = Atomic<Int>(0)
    private let mayRunSynchronously: Bool
    /// The thread running counted work now (0 for none): the root queue is serial, so one at most.
    private let workingThread = Atomic<UInt>(0)
    /// What that work asked to run once it is over (see `afterCurrentWork(_:)`).
    private let deferred = Mutex(DeferredWorkList())

    /// - Parameter queue: The Session's serial root queue; it is marked as this runner's.
    init(queue: DispatchQueue) {
        self.queue = queue
        entry = SerialQueueEntry(queue: queue)
        mayRunSynchronously = !Self.isMainQueue(queue)
        queue.setSpecific(key: Self.key, value: marker)
    }

    /// Marks the main queue, which on Linux no identity check finds: each read of
    /// `DispatchQueue.main` there makes a new object around it.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether `queue` is the main queue itself (not a queue targeting it).
    static func isMainQueue(_ queue: DispatchQueue) -> Bool {
        queue.getSpecific(key: mainQueueKey) == true
    }

    /// Whether the calling thread runs on the root queue (or a queue targeting it) right now.
    var isCurrent: Bool {
        place == .onRootQueue
    }

    /// Where the calling thread stands, from one look-up of the queue-specific value.
    private enum Place {
        /// On this root queue (or a queue targeting it).
        case onRootQueue
        /// On another Session's root queue: never entered synchronously from there.
        case onAnotherRootQueue
        /// On no Session's root queue.
        case outside
    }

    private var place: Place {
        guard let found = DispatchQueue.getSpecific(key: Self.key) else { return .outside }
        return found === marker ? .onRootQueue : .onAnotherRootQueue
    }

    /// Whether work run with `run(_:)` from outside every root queue, off an event loop, would run
    /// on the calling thread now: nothing of Lupine's waits on the root queue or runs there, and
    /// the root queue is not the main queue. A hint, stale as soon as read.
    var isFreeForWorkFromOutside: Bool {
        mayRunSynchronously && outstanding.load(ordering: .acquiring) == 0
    }

    /// Runs `work` on the root queue after the work already there.
    func async(_ work: @escaping @Sendable () -> Void) {
        async(on: queue, work)
    }

    /// `async(_:)` for work on `subject` that captures nothing else: the one closure queued holds
    /// `subject` and `work` itself, where a closure made by the caller would be one allocation more.
    func async<Subject: AnyObject & Sendable>(_ subject: Subject, _ work: @escaping @Sendable (Subject) -> Void) {
        outstanding.add(1, ordering: .acquiringAndReleasing)
        queue.async { self.runCounted { work(subject) } }
    }

    /// `async(_:_:)` for work on `subject` and `payload` that captures nothing else.
    func async<Subject: AnyObject & Sendable, Payload: Sendable>(_ subject: Subject, _ payload: Payload,
                                                                 _ work: @escaping @Sendable (Subject, Payload) -> Void) {
        outstanding.add(1, ordering: .acquiringAndReleasing)
        queue.async { self.runCounted { work(subject, payload) } }
    }

    /// Runs `work` on `target` (the root queue or a queue of the Session's that targets it), counted
    /// as work waiting on the root queue until it has run.
    func async(on target: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        outstanding.add(1, ordering: .acquiringAndReleasing)
        target.async { self.runCounted(work) }
    }

    /// Counts work that the caller queues on the root queue itself, with a closure capturing one
    /// object alone (that object is then the closure's context: one allocation fewer than a
    /// closure of `async(_:_:)`, which also holds the runner and the work). The queued closure
    /// must call `runQueued(_:)` exactly once.
    func willQueue() {
        outstanding.add(1, ordering: .acquiringAndReleasing)
    }

    /// Runs work queued after `willQueue()`, from the closure queued on the root queue.
    func runQueued(_ work: () -> Void) {
        runCounted(work)
    }

    /// Runs queued work counted by `outstanding`, then uncounts it and runs what it deferred.
    private func runCounted(_ work: () -> Void) {
        let deferred = perform(work)
        outstanding.subtract(1, ordering: .acquiringAndReleasing)
        deferred.forEach { $0.runAfterRootQueueWork() }
    }

    /// Runs `action` once the root-queue work running on this thread is over and no longer counted
    /// (at once when this thread runs none). Waking a caller from inside that work would have the
    /// caller find the root queue busy and queue its next request behind it, a hand-off.
    func afterCurrentWork(_ work: any DeferredRootQueueWork) {
        if workingThread.load(ordering: .acquiring) == Self.currentThread() {
            deferred.withLock { $0.append(work) }
        } else {
            work.runAfterRootQueueWork()
        }
    }

    /// Runs counted work; returns the work it deferred, to run once it is no longer counted.
    private func perform(_ work: () -> Void) -> DeferredWorkList {
        workingThread.store(Self.currentThread(), ordering: .releasing)
        work()
        workingThread.store(0, ordering: .releasing)
        return deferred.withLock { list in
            defer { list = DeferredWorkList() }
            return list
        }
    }

    /// Runs `work` on the root queue: at once when already there, on this thread when nothing of
    /// Lupine's waits there, else queued.
    func run(_ work: @escaping @Sendable () -> Void) {
        switch place {
        case .onRootQueue: work()
        case .outside where runSynchronouslyIfIdle(Closure(work: work)): break
        case .outside, .onAnotherRootQueue: async(work)
        }
    }

    /// `run(_:)` for work on `subject` that captures nothing else: no closure is made unless the
    /// work has to be queued.
    func run<Subject: AnyObject & Sendable>(_ subject: Subject, _ work: @escaping @Sendable (Subject) -> Void) {
        switch place {
        case .onRootQueue: work(subject)
        case .outside where runSynchronouslyIfIdle(OnSubject(subject: subject, work: work)): break
        case .outside, .onAnotherRootQueue: async(subject, work)
        }
    }

    /// `run(_:)` for work on `subject` and `payload` that captures nothing else: no closure is
    /// made unless the work has to be queued.
    func run<Subject: AnyObject & Sendable, Payload: Sendable>(_ subject: Subject, _ payload: Payload,
                                                               _ work: @escaping @Sendable (Subject, Payload) -> Void) {
        switch place {
        case .onRootQueue: work(subject, payload)
        case .outside where runSynchronouslyIfIdle(OnSubjectAndPayload(subject: subject, payload: payload, work: work)): break
        case .outside, .onAnotherRootQueue: async(subject, payload, work)
        }
    }

    /// Runs `work` inside a synchronous entry of the root queue (`SerialQueueEntry`) when nothing
    /// of Lupine's waits there. Called only from outside every Session's root queue
    /// (`Place.outside`): two Sessions entering each other's root queue synchronously could each
    /// wait for the other. Never from an event loop: the work may be user code, and a loop must
    /// not wait for it (the thread contract).
    private func runSynchronouslyIfIdle<Work: RootQueueWork>(_ work: Work) -> Bool {
        guard mayRunSynchronously, !ThreadContract.isOnEventLoop,
              outstanding.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        // The deferred actions run once the root queue is left, not while it is held.
        var run = SynchronousRun(runner: self, work: work)
        entry.sync(&run)
        outstanding.subtract(1, ordering: .acquiringAndReleasing)
        run.deferred.forEach { $0.runAfterRootQueueWork() }
        return true
    }

    /// One run of root-queue work inside the synchronous entry: `perform(_:)` around `work`, the
    /// work it deferred kept for after the queue is left.
    private struct SynchronousRun<Work: RootQueueWork>: QueueEntryBody {
        let runner: RootQueueRunner
        let work: Work
        var deferred = DeferredWorkList()

        mutating func run() {
            deferred = runner.perform { work.run() }
        }
    }

    /// The three shapes of work `run` takes, as values: a closure made around them to pass to
    /// the queue would be an allocation.
    private struct Closure: RootQueueWork {
        let work: () -> Void
        func run() { work() }
    }

    private struct OnSubject<Subject>: RootQueueWork {
        let subject: Subject
        let work: (Subject) -> Void
        func run() { work(subject) }
    }

    private struct OnSubjectAndPayload<Subject, Payload>: RootQueueWork {
        let subject: Subject
        let payload: Payload
        let work: (Subject, Payload) -> Void
        func run() { work(subject, payload) }
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

/// Work run on the root queue by `RootQueueRunner.run`, held as a value.
private protocol RootQueueWork {
    func run()
}

/// Work that root-queue work asks to run once it is over (`RootQueueRunner.afterCurrentWork(_:)`).
protocol DeferredRootQueueWork: AnyObject, Sendable {
    func runAfterRootQueueWork()
}

/// The work deferred by one run of root-queue work, in order.
typealias DeferredWorkList = SmallList<any DeferredRootQueueWork>
