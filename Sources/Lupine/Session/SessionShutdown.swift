import Foundation
import NIOConcurrencyHelpers
import Synchronization

/// Whether a Session still takes requests, and who waits for its last request to end.
///
/// `isClosed` is read once per new request, so it is an atomic flag rather than a lock.
final class SessionShutdown: Sendable {
    private let closed = Atomic<Bool>(false)
    private let waiters = NIOLockedValueBox<[UUID: CheckedContinuation<Void, Never>]>([:])

    /// True once `shutdown()` was called: new requests fail.
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Stops taking requests.
    func close() {
        closed.store(true, ordering: .releasing)
    }

    /// Wakes every `waitUntilDrained` caller: the Session has no request left.
    func didDrain() {
        let drained = waiters.withLockedValue { waiters in
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in drained { waiter.resume() }
    }

    /// Returns once `isDrained()` holds or `didDrain()` is called, or when the task is cancelled.
    ///
    /// The waiter is registered before `isDrained()` is checked, so a drain that happens in
    /// between is not missed.
    func waitUntilDrained(_ isDrained: @escaping @Sendable () -> Bool) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiters.withLockedValue { $0[id] = continuation }
                if isDrained() || Task.isCancelled { resume(id) }
            }
        } onCancel: {
            resume(id)
        }
    }

    private func resume(_ id: UUID) {
        waiters.withLockedValue { $0.removeValue(forKey: id) }?.resume()
    }
}
