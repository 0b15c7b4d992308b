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
    private var value: Value

    /// Creates a lock guarding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        value = initialValue
    }

    /// Runs `body` with exclusive access to the guarded value, as `Mutex.withLock` does.
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
