import NIOConcurrencyHelpers

/// A lock with `Synchronization.Mutex`'s surface that ThreadSanitizer can see, for the
/// `LUPINE_TSAN=1` build only (see Package.swift).
///
/// On Linux `Synchronization.Mutex` is a futex that TSan does not intercept, so TSan sees no
/// happens-before between two holders of one Mutex and reports every access to the state it
/// guards as a race. `NIOLock` is a `pthread_mutex_t`, which TSan does intercept. Each of our
/// modules declares `typealias Mutex<Value> = SanitizerVisibleMutex<Value>` in that build; a
/// module's own declaration shadows the imported `Synchronization.Mutex`, so no call site
/// changes. A class rather than a noncopyable struct: the call sites only ever hold it in a `let`.
public final class SanitizerVisibleMutex<Value: ~Copyable>: @unchecked Sendable {
    private let lock = NIOLock()
    /// Out of line, not a stored `var`: TSan marks each exclusive access to a class's stored
    /// property as a write at the property's address, and for an empty Value (`Mutex(())`) that
    /// address is the object's own header, which every call reads before taking the lock, so a
    /// debug build reported a race on the header. A pointer's pointee has no such marker; the
    /// body's own reads and writes of the value are still checked.
    private let value: UnsafeMutablePointer<Value>

    /// Creates a lock guarding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the guarded value, as `Mutex.withLock` does.
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value.pointee)
    }
}
