import Dispatch

/// Where a response handler's result goes: a completion handler on a queue, or the handler's own
/// `PendingResponse`, which the async API awaits.
enum ResponseDelivery<Response: Sendable>: Sendable {
    case handler(DispatchQueue, @Sendable (Response) -> Void)
    case awaited
}
