import NIOConcurrencyHelpers

/// The "done" callbacks of the events buffered in an `AsyncStream`, oldest first: an event is
/// handled when the iterator takes it, when the buffer drops it, or when the iteration ends.
/// The async streams of `DataStreamRequest` and `WebSocketRequest` count what their iteration has
/// not taken yet through it, so that a slow loop pauses reading like a slow handler does.
final class BufferedDeliveries<Element: Sendable>: Sendable {
    private let dropsOldest: Bool
    private let pending = NIOLockedValueBox<[@Sendable () -> Void]>([])

    init(bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy) {
        if case let .bufferingNewest(limit) = bufferingPolicy, limit > 0 {
            dropsOldest = true
        } else {
            dropsOldest = false
        }
    }

    /// Yields `element`; `done` runs once the iterator has taken it or the buffer has dropped it.
    ///
    /// `done` is recorded before yielding: the iterator may take the element (and release the
    /// oldest entry) before `yield` even returns.
    func yield(_ element: Element, into continuation: AsyncStream<Element>.Continuation, done: @escaping @Sendable () -> Void) {
        pending.withLockedValue { $0.append(done) }
        let result = continuation.yield(element)
        let released: (@Sendable () -> Void)? = pending.withLockedValue { pending in
            guard !pending.isEmpty else { return nil }
            switch result {
            case .enqueued: return nil
            // The oldest buffered element made room for this one.
            case .dropped where dropsOldest: return pending.removeFirst()
            // This element was not buffered (only one producer yields, so it is the last entry).
            case .dropped, .terminated: return pending.removeLast()
            @unknown default: return pending.removeLast()
            }
        }
        released?()
    }

    func releaseOldest() {
        let released = pending.withLockedValue { $0.isEmpty ? nil : $0.removeFirst() }
        released?()
    }

    func releaseAll() {
        let released = pending.withLockedValue { pending in
            defer { pending.removeAll() }
            return pending
        }
        released.forEach { $0() }
    }
}
