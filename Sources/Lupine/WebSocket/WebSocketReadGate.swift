import NIOCore

/// Which received frames an open WebSocket connection processes at once and which wait while the
/// request's consumer is behind, and when the socket may be read again: the backpressure of
/// incoming messages, beside `WebSocketFrameHandler`.
///
/// A pure state machine: the handler tells it what happened (a frame was read, NIO asked to read
/// the socket, the consumer caught up) and whether the request's read demand is paused right
/// now, and does what it answers. While paused, socket reads are held back, so the server's
/// writes meet TCP flow control; frames already decoded from bytes read before the pause wait
/// here in order (at most one read's worth). Pings and pongs among them do not wait: a ping is
/// answered and a pong matched at once, which cannot reorder anything the consumer sees. Every
/// other frame (data, close, unknown) keeps its place behind the first one held, so messages
/// and the close reach the consumer in the order the server sent them.
struct WebSocketReadGate<Frame> {
    /// How a frame is ordered against the frames held before it.
    enum Order {
        /// Processed after every frame held before it: data and close frames.
        case keepsItsPlace
        /// Processed when read, whatever is held: pings and pongs.
        case answeredAtOnce
    }

    private var held = CircularBuffer<Frame>()
    /// NIO asked to read the socket while frames were held or reading was paused; the read goes
    /// out once the consumer has caught up.
    private(set) var isReadHeld = false

    /// Frames waiting for the consumer to catch up.
    var heldFrameCount: Int { held.count }

    /// A frame was read: true when it is processed now; false when it waits (and comes back from
    /// `nextHeldFrame`).
    mutating func frameArrived(_ frame: Frame, order: Order, paused: Bool) -> Bool {
        switch order {
        case .answeredAtOnce:
            return true
        case .keepsItsPlace:
            guard paused || !held.isEmpty else { return true }
            held.append(frame)
            return false
        }
    }

    /// NIO asks to read the socket: true when the read goes out now; false when it is held until
    /// the consumer has caught up and the held frames are processed (`releasesHeldRead`).
    mutating func readRequested(paused: Bool) -> Bool {
        guard paused || !held.isEmpty else { return true }
        isReadHeld = true
        return false
    }

    /// The oldest held frame, to be processed now; nil while paused, or when none is held.
    mutating func nextHeldFrame(paused: Bool) -> Frame? {
        guard !paused else { return nil }
        return held.popFirst()
    }

    /// True when the read held back goes out now: reading is not paused and no frame is held.
    mutating func releasesHeldRead(paused: Bool) -> Bool {
        guard !paused, held.isEmpty, isReadHeld else { return false }
        isReadHeld = false
        return true
    }
}
