/// The pure bookkeeping behind the backpressure of a `DataStreamRequest` (its body parts) and of a
/// `WebSocketRequest` (its messages): which parts were handed to which handler and are not yet
/// done, when the transport must stop reading, when it may read again, and when a handler's
/// `.complete` event may go out.
///
/// It performs no I/O and calls nothing; the request acts on what it answers. Every delivery of a
/// part to a handler counts (a part given to three handlers counts three times), which bounds
/// memory conservatively: the handlers share the part's bytes. Reading pauses as soon as a part
/// takes the count over a bound, so with a transport that holds parts from the moment it is
/// paused, what waits undelivered exceeds the bound by at most that one part per handler.
struct StreamDelivery {
    /// Reading pauses when more than this many bytes are handed out and not yet done...
    static let pauseAboveBytes = 1 << 20
    /// ...or more than this many deliveries (small parts cost dispatches, not bytes).
    static let pauseAboveDeliveries = 64
    /// Reading resumes once the handlers are back at or under both of these.
    static let resumeAtBytes = 256 << 10
    static let resumeAtDeliveries = 16

    private struct Pending {
        var deliveries = 0
        var completionIsWaiting = false
    }

    private var nextHandlerID = 0
    /// Handlers in the order they were added.
    private(set) var handlerIDs: [Int] = []
    private var pending: [Int: Pending] = [:]
    private(set) var pendingBytes = 0
    private(set) var pendingDeliveries = 0
    /// The handlers are behind: reading is paused for them until they catch up.
    private(set) var isReadingPaused = false
    /// The most bytes and deliveries ever handed out and not yet done at once (for tests).
    private(set) var peakPendingBytes = 0
    private(set) var peakPendingDeliveries = 0

    /// Registers a handler; parts arriving from now on are delivered to it.
    mutating func addHandler() -> Int {
        let id = nextHandlerID
        nextHandlerID += 1
        handlerIDs.append(id)
        pending[id] = Pending()
        return id
    }

    /// A body part of `byteCount` bytes arrived and goes to every handler: whether the transport
    /// pauses reading until `deliveryFinished` answers `resumeReading`.
    mutating func partArrived(byteCount: Int) -> Bool {
        for id in handlerIDs { pending[id, default: Pending()].deliveries += 1 }
        pendingDeliveries += handlerIDs.count
        pendingBytes += byteCount * handlerIDs.count
        peakPendingBytes = max(peakPendingBytes, pendingBytes)
        peakPendingDeliveries = max(peakPendingDeliveries, pendingDeliveries)
        guard !isReadingPaused,
              pendingBytes > Self.pauseAboveBytes || pendingDeliveries > Self.pauseAboveDeliveries else { return false }
        isReadingPaused = true
        return true
    }

    struct DeliveryOutcome: Equatable {
        /// Tell the transport to read again.
        var resumeReading = false
        /// The handler's `.complete` event was waiting for this delivery: send it now.
        var sendCompletion = false
    }

    /// One handler is done with a part of `byteCount` bytes.
    mutating func deliveryFinished(handler id: Int, byteCount: Int) -> DeliveryOutcome {
        var outcome = DeliveryOutcome()
        pendingDeliveries = max(pendingDeliveries - 1, 0)
        pendingBytes = max(pendingBytes - byteCount, 0)
        if var handler = pending[id] {
            handler.deliveries = max(handler.deliveries - 1, 0)
            if handler.deliveries == 0, handler.completionIsWaiting {
                handler.completionIsWaiting = false
                outcome.sendCompletion = true
            }
            pending[id] = handler
        }
        if isReadingPaused, pendingBytes <= Self.resumeAtBytes, pendingDeliveries <= Self.resumeAtDeliveries {
            isReadingPaused = false
            outcome.resumeReading = true
        }
        return outcome
    }

    /// The request finished: the handler gets no more parts, and its `.complete` event goes out
    /// now (true) or once its last delivery is done (`deliveryFinished` then answers `sendCompletion`).
    mutating func completionRequested(handler id: Int) -> Bool {
        handlerIDs.removeAll { $0 == id }
        guard var handler = pending[id], handler.deliveries > 0 else { return true }
        handler.completionIsWaiting = true
        pending[id] = handler
        return false
    }
}
