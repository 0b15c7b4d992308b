import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Moves the bytes of one HTTP exchange: one request out, one response in, no redirect following,
/// no retries, no cookies or caching (Session does all of that above the transport).
///
/// Lupine's production transport runs on AsyncHTTPClient. A test double that conforms to this
/// protocol can be handed to `Session(transport:...)` to unit-test code that uses Lupine without
/// a network.
public protocol Transport: Sendable {
    /// Starts one exchange and reports its progress to `events`.
    ///
    /// Every call must end in exactly one `transportDidComplete` on `events`, also after `cancel()`.
    /// - Returns: the handle used to cancel the exchange or to resume reading a paused body.
    func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask

    /// Stops accepting work and releases connections. Exchanges still running fail with
    /// `URLError(.cancelled)`. Calling it twice is harmless.
    func shutdown(completion: @escaping @Sendable () -> Void)
}

/// The handle of one running exchange.
public protocol TransportTask: AnyObject, Sendable {
    /// Cancels the exchange; `transportDidComplete` follows with `URLError(.cancelled)`.
    func cancel()
    /// Lets the transport deliver the next response head or body part after an event handler
    /// answered `.pause`.
    ///
    /// A consumer may call it before its `.pause` answer has reached the transport (the decision is
    /// often made on another queue): the transport must then not pause at all. One call answers
    /// one `.pause`.
    func resumeReading()
}

/// What the consumer of an exchange answers after a head or a body part: go on reading, or wait
/// until `TransportTask.resumeReading()` (backpressure reaches the socket while paused).
public enum TransportReadiness: Sendable {
    /// Deliver the next part as soon as it arrives.
    case proceed
    /// Deliver nothing more until `resumeReading()`.
    case pause
}

/// Receives the events of one exchange, in this order: sent bytes (zero or more), the response head,
/// body parts, then completion. Calls for one exchange never overlap.
public protocol TransportEvents: AnyObject, Sendable {
    /// Body bytes written so far.
    func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)
    /// The whole request, head and body, has been written.
    func transportDidSendRequest(_ task: any TransportTask)
    /// The response head arrived.
    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) -> TransportReadiness
    /// A part of the (decoded) response body arrived.
    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) -> TransportReadiness
    /// The exchange ended: `error` is nil after the whole body arrived.
    func transportDidComplete(_ task: any TransportTask, error: URLError?)
}

extension TransportEvents {
    /// Default: ignores upload progress.
    public func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {}
    /// Default: ignores the event.
    public func transportDidSendRequest(_ task: any TransportTask) {}
}
