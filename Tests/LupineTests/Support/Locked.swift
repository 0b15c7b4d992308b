import Foundation

/// A value shared between a test and the closures it hands to Lupine.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    var current: Value { lock.withLock { value } }

    @discardableResult
    func withValue<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&value) }
    }
}

extension Locked where Value == Int {
    /// Adds one and returns the new count.
    @discardableResult
    func increment() -> Int { withValue { $0 += 1; return $0 } }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout` seconds.
/// The default is generous because it only bounds a failure: on a loaded machine (a test run
/// beside builds) what takes milliseconds on a quiet one can take seconds.
func waitUntil(timeout: TimeInterval = 30, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// Waits until `value` has held still for `stillFor` seconds (sampled every 100 ms), for at most
/// `timeout` seconds, and returns it. For "nothing more arrives" checks: a pause asked for from
/// another thread lets what one socket read decoded still land, late on a loaded machine.
func valueOnceStill(stillFor: TimeInterval = 0.5, timeout: TimeInterval = 10, _ value: @Sendable () -> Int64) async -> Int64 {
    let deadline = Date(timeIntervalSinceNow: timeout)
    var last = value()
    var stillSince = Date()
    while Date() < deadline, Date().timeIntervalSince(stillSince) < stillFor {
        try? await Task.sleep(nanoseconds: 100_000_000)
        let now = value()
        if now != last { stillSince = Date() }
        last = now
    }
    return last
}

extension Array {
    /// Collects an async sequence.
    init<S: AsyncSequence>(_ sequence: S) async where S.Element == Element {
        var elements: [Element] = []
        do {
            for try await element in sequence { elements.append(element) }
        } catch {}
        self = elements
    }
}

/// The value of `operation`, or nil when it takes longer than `seconds` (the operation is then
/// cancelled): tests of "this never hangs" fail instead of hanging.
func withDeadline<T: Sendable>(seconds: Double, _ operation: @escaping @Sendable () async -> T) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// A weak reference that closures can read, for tests that an object was released.
final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: Object?

    init(_ object: Object) { self.object = object }

    var isReleased: Bool { lock.withLock { object == nil } }
}
