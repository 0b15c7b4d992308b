import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Moves the bytes of one HTTP exchange: one request out, one response in, no redirect following,
/// no retries, no cookies or caching (Session does all of that above the transport).
///
/// Lupine's production transport is `ConnectionEngine`, its own on SwiftNIO. A test double that
/// conforms to this protocol can be handed to `Session(transport:...)` to unit-test code that uses
/// Lupine without a network.
public protocol Transport: Sendable {
    /// Starts one exchange and reports its progress to `events`.
    ///
    /// Every call must end in exactly one `transportDidComplete` on `events`, also after `cancel()`.
    /// - Returns: the handle used to cancel the exchange and to pause and resume reading its response.
    func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask

    /// Stops accepting work and releases connections. Exchanges still running fail with
    /// `URLError(.cancelled)`. Calling it twice is harmless.
    func shutdown(completion: @escaping @Sendable () -> Void)
}

/// The handle of one running exchange.
///
/// Read demand: the consumer calls `pauseReading()` and `resumeReading()` strictly alternating,
/// starting with `pauseReading()`, so each pause is answered by exactly one resume; the transport
/// keeps a paused flag, no credit counters, and ends in the state asked for last whatever the
/// order in which calls from different threads reach it. Both may be called from any thread.
/// - A pause called from inside an event callback of this exchange takes effect before the next
///   event is delivered. Called from another thread it takes effect when its one hop to the
///   transport's thread runs: events decoded from bytes read before then may still arrive (a
///   few socket reads' worth at most).
/// - While paused the transport reads nothing more from the socket, so backpressure reaches the
///   peer. The idle timeout does not run while paused (the pause is the client's choice, not the
///   server's silence); the resource deadline does.
public protocol TransportTask: AnyObject, Sendable {
    /// Cancels the exchange, paused or not; `transportDidComplete` follows with `URLError(.cancelled)`.
    func cancel()
    /// Stops delivering response events and reading the socket until `resumeReading()`.
    func pauseReading()
    /// Answers the last `pauseReading()`: delivery and reading go on.
    func resumeReading()
}

/// Receives the events of one exchange, in this order: sent bytes (zero or more), request sent,
/// the response head, body parts, then completion. Calls for one exchange never overlap, and
/// every `execute` ends in exactly one `transportDidComplete`.
public protocol TransportEvents: AnyObject, Sendable {
    /// Body bytes written so far.
    func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?)
    /// The whole request, head and body, has been written.
    func transportDidSendRequest(_ task: any TransportTask)
    /// The response head arrived.
    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead)
    /// A part of the (decoded) response body arrived.
    func transportDidReceive(_ task: any TransportTask, bodyPart: Data)
    /// The exchange ended: `error` is nil after the whole body arrived.
    func transportDidComplete(_ task: any TransportTask, error: URLError?)
}

extension TransportEvents {
    /// Default: ignores upload progress.
    public func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {}
    /// Default: ignores the event.
    public func transportDidSendRequest(_ task: any TransportTask) {}
}
