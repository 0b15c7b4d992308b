/// The pauses of one consumer's deliveries, and whether the deliverer stopped for them: the
/// bookkeeping an exchange and a WebSocket connection keep under their own locks.
///
/// The consumer alternates pause and resume, so the count is 0 or 1; a count keeps it right even
/// if a resume from another thread overtakes the pause it answers.
struct DeliveryPauses {
    /// Pauses not yet answered by a resume: deliveries stop while positive.
    private(set) var count = 0
    /// The deliverer holds parts or a socket read back because of a pause: a resume must wake it.
    private(set) var isStalled = false

    var isPaused: Bool { count > 0 }

    mutating func pause() {
        count += 1
    }

    /// One pause ends. True when none is left and the deliverer stopped for them, and `canWake`
    /// (someone is there to wake): the caller wakes it, and it no longer counts as stopped.
    mutating func resume(canWake: Bool) -> Bool {
        count -= 1
        guard count <= 0, isStalled, canWake else { return false }
        isStalled = false
        return true
    }

    /// Whether deliveries must stop now; when they must, the deliverer counts as stopped, so
    /// that the next resume wakes it.
    mutating func holdsDelivery() -> Bool {
        guard count > 0 else { return false }
        isStalled = true
        return true
    }

    /// The deliverer went away (the exchange goes back to its pool): nobody is stopped.
    mutating func forgetStall() {
        isStalled = false
    }
}
