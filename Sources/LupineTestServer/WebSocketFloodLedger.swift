import Synchronization

/// What the `/websocket/echo?flood=N` connections of a server have done so far, summed over
/// them: how many flood messages were handed to the channel, and how many times the channel was
/// full (unwritable) so that the server had to wait for the client to read.
public struct WebSocketFloodProgress: Sendable, Equatable {
    /// Flood messages handed to the channel (each is on the wire or in the channel's small
    /// outbound buffer, bounded by its write watermark).
    public var messagesWritten = 0
    /// Times a flood stopped because the channel was unwritable, until it became writable again.
    public var timesUnwritable = 0
    /// Floods that have written all their messages.
    public var floodsFinished = 0
}

/// The counters behind `LupineTestServer.webSocketFlood`; written on event loops, read by tests.
final class WebSocketFloodLedger: Sendable {
    private let progress = Mutex(WebSocketFloodProgress())

    var current: WebSocketFloodProgress {
        progress.withLock { $0 }
    }

    func recordWritten() {
        progress.withLock { $0.messagesWritten += 1 }
    }

    func recordUnwritable() {
        progress.withLock { $0.timesUnwritable += 1 }
    }

    func recordFinished() {
        progress.withLock { $0.floodsFinished += 1 }
    }
}
