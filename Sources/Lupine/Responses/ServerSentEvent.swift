/// One event of a `text/event-stream` response (Server-Sent Events, WHATWG HTML section 9.2).
public struct ServerSentEvent: Sendable, Hashable {
    /// The last event ID in effect when the event was dispatched: set by an `id` field of this or
    /// an earlier event (an empty `id` resets it to ""); nil when the stream never set one. It is
    /// what a reconnection sends as `Last-Event-ID`.
    public var id: String?
    /// The event type: the `event` field, or "message" when there was none.
    public var event: String
    /// The `data` fields joined with "\n" (one line per field, the final newline removed).
    public var data: String
    /// The reconnection time in milliseconds set by the latest valid `retry` field of the stream
    /// so far, if any.
    public var retry: Int?

    /// Creates an event.
    public init(id: String? = nil, event: String = "message", data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }
}
