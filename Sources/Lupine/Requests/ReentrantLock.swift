import Synchronization

/// A lock that the thread holding it may take again, stored inline in its owner.
///
/// `NSRecursiveLock` costs two allocations per instance, and every request has one such lock
/// (its read demand). This one is a `Mutex` and the identifier of the thread holding it: a thread
/// that finds its own identifier there already holds the lock and runs the body at once. Only
/// the holder writes its identifier, and clears it before unlocking, so no other thread can read
/// its own identifier there.
struct ReentrantLock: ~Copyable, Sendable {
    private let mutex = Mutex<Void>(())
    private let holder = Atomic<UInt>(0)

    /// Runs `body` holding the lock; at once when this thread holds it already.
    func withLock<Result: Sendable>(_ body: () -> Result) -> Result {
        let thread = RootQueueRunner.currentThread()
        if holder.load(ordering: .relaxed) == thread { return body() }
        return mutex.withLock { _ in
            holder.store(thread, ordering: .relaxed)
            defer { holder.store(0, ordering: .relaxed) }
            return body()
        }
    }
}
