import Foundation
import NIOConcurrencyHelpers

/// A `DataStreamSerializer` that turns the chunks of a `text/event-stream` response into the
/// Server-Sent Events they complete (see `ServerSentEventParser` for the rules).
///
/// Unlike the other stream serializers it keeps state between chunks (an event may span many of
/// them, and a chunk may complete several): use one instance per response. The conveniences
/// `responseServerSentEvents(on:handler:)` and `streamingServerSentEvents()` make their own.
public final class ServerSentEventSerializer: DataStreamSerializer {
    private let parser = NIOLockedValueBox(ServerSentEventParser())

    /// Creates a serializer at the start of a stream.
    public init() {}

    /// The events completed by `data` (none, one or several).
    public func serialize(_ data: Data) throws -> [ServerSentEvent] {
        parser.withLockedValue { $0.parse(data) }
    }

    /// The events completed by `data`.
    func parse(_ data: Data) -> [ServerSentEvent] {
        parser.withLockedValue { $0.parse(data) }
    }

    /// The last event ID the stream set so far.
    public var lastEventID: String? { parser.withLockedValue { $0.lastEventID } }

    /// The reconnection time, in milliseconds, the stream set so far.
    public var reconnectionTime: Int? { parser.withLockedValue { $0.reconnectionTime } }
}
