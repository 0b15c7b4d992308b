import Foundation

/// When each stage of a request happened, and how long the stages took. It stands in for
/// `URLSessionTaskMetrics` (which cannot carry real values on Linux).
///
/// Times are of the last attempt; `retryCount` and `redirectCount` count across the request.
public struct Timeline: Sendable, Equatable, CustomStringConvertible {
    /// When the request started (setup began for the first attempt).
    public let requestStartTime: Date?
    /// When the last attempt's request, head and body, was written.
    public let requestSentTime: Date?
    /// When the last attempt's response head arrived (first byte).
    public let initialResponseTime: Date?
    /// When the last attempt's response body ended (or the request failed).
    public let requestCompletedTime: Date?
    /// When the response serializer finished (nil before serialization).
    public let serializationCompletedTime: Date?
    /// Redirect hops followed by the last attempt.
    public let redirectCount: Int
    /// Retries performed.
    public let retryCount: Int

    /// Start to first byte.
    public var latency: TimeInterval { Self.interval(requestStartTime, initialResponseTime) }
    /// Start to completion of the transfer.
    public var requestDuration: TimeInterval { Self.interval(requestStartTime, requestCompletedTime) }
    /// Completion of the transfer to the end of serialization.
    public var serializationDuration: TimeInterval { Self.interval(requestCompletedTime, serializationCompletedTime) }
    /// Start to the end of serialization (or of the transfer, before serialization).
    public var totalDuration: TimeInterval { Self.interval(requestStartTime, serializationCompletedTime ?? requestCompletedTime) }

    /// Creates a timeline; every value defaults to "not happened".
    public init(requestStartTime: Date? = nil,
                requestSentTime: Date? = nil,
                initialResponseTime: Date? = nil,
                requestCompletedTime: Date? = nil,
                serializationCompletedTime: Date? = nil,
                redirectCount: Int = 0,
                retryCount: Int = 0) {
        self.requestStartTime = requestStartTime
        self.requestSentTime = requestSentTime
        self.initialResponseTime = initialResponseTime
        self.requestCompletedTime = requestCompletedTime
        self.serializationCompletedTime = serializationCompletedTime
        self.redirectCount = redirectCount
        self.retryCount = retryCount
    }

    /// This timeline with the serialization end set.
    func serialized(at date: Date) -> Timeline {
        Timeline(requestStartTime: requestStartTime, requestSentTime: requestSentTime,
                 initialResponseTime: initialResponseTime, requestCompletedTime: requestCompletedTime,
                 serializationCompletedTime: date, redirectCount: redirectCount, retryCount: retryCount)
    }

    private static func interval(_ start: Date?, _ end: Date?) -> TimeInterval {
        guard let start, let end else { return 0 }
        return end.timeIntervalSince(start)
    }

    public var description: String {
        func ms(_ value: TimeInterval) -> String { String(format: "%.3fs", value) }
        return "Timeline: { latency: \(ms(latency)), request: \(ms(requestDuration)), "
            + "serialization: \(ms(serializationDuration)), total: \(ms(totalDuration)), "
            + "redirects: \(redirectCount), retries: \(retryCount) }"
    }
}
