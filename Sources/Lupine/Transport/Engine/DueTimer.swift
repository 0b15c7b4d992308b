import NIOCore

/// A timer that makes sure something happens by a due time, serving many arms: arming it for a
/// later time than the one it is set for keeps it as it is (what fires early checks what is left
/// and arms again), so that a kept-alive connection usually schedules nothing per exchange.
/// Used on one event loop only.
struct DueTimer {
    private var armed: (timer: Scheduled<Void>, due: NIODeadline)?

    /// Makes sure a timer fires by `due`; `schedule` makes it when the one armed fires later or
    /// none is armed (that one is then cancelled).
    mutating func arm(by due: NIODeadline, schedule: (NIODeadline) -> Scheduled<Void>) {
        if let armed {
            if armed.due <= due { return }
            armed.timer.cancel()
        }
        armed = (schedule(due), due)
    }

    /// Forgets the timer that has just fired.
    mutating func fired() {
        armed = nil
    }

    /// Cancels the armed timer, if any.
    mutating func cancel() {
        armed?.timer.cancel()
        armed = nil
    }
}
