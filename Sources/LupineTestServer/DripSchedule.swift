import NIOCore

/// Spreads `totalBytes` evenly over `duration`: byte k is due at k × duration / totalBytes,
/// and the response ends when the whole duration has passed.
struct DripSchedule {
    let totalBytes: Int
    let duration: TimeAmount

    /// Ticks are never closer than this, so a large byte count cannot flood the event loop with timers.
    static let minimumTick = TimeAmount.milliseconds(10)

    /// How many bytes should have been sent once `elapsed` has passed.
    func bytesDue(after elapsed: TimeAmount) -> Int {
        guard duration.nanoseconds > 0, elapsed < duration else { return totalBytes }
        let fraction = Double(elapsed.nanoseconds) / Double(duration.nanoseconds)
        return min(totalBytes, Int(Double(totalBytes) * fraction) + 1)
    }

    /// When the next byte (or, once all are sent, the end) is due, measured from the start.
    func nextEvent(afterSending sent: Int) -> TimeAmount {
        guard sent < totalBytes, totalBytes > 0 else { return duration }
        let nanoseconds = Double(duration.nanoseconds) * Double(sent) / Double(totalBytes)
        return .nanoseconds(Int64(nanoseconds))
    }
}
