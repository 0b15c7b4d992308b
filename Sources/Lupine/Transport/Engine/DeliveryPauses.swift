/// Whether a consumer has paused deliveries, and whether the deliverer stopped for it: the
/// bookkeeping a WebSocket connection keeps under its lock for its frame handler.
///
/// A flag, not a count of pauses. The consumer, the request's `ReadDemand`, alternates pause and
/// resume and makes each call under a lock of its own, and each call records its state here
/// under the connection's lock before it returns: the calls land in the order they were made, so
/// the state last recorded is the one asked for last.
struct DeliveryPauses {
    /// Deliveries stop while true.
    private(set) var isPaused = false
    /// The deliverer holds parts or a socket read back because of the pause: a resume must wake it.
    private(set) var isStalled = false

    mutating func pause() {
        isPaused = true
    }

    /// The pause ends. True when the deliverer stopped for it and `canWake` (someone is there to
    /// wake): the caller wakes it, and it no longer counts as stopped.
    mutating func resume(canWake: Bool) -> Bool {
        isPaused = false
        guard isStalled, canWake else { return false }
        isStalled = false
        return true
    }

    /// Whether deliveries must stop now; when they must, the deliverer counts as stopped, so
    /// that the next resume wakes it.
    mutating func holdsDelivery() -> Bool {
        guard isPaused else { return false }
        isStalled = true
        return true
    }
}
