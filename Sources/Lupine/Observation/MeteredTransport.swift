import Foundation
import NIOConcurrencyHelpers

/// Counts the body bytes that cross a transport, for `MetricsEventMonitor`.
///
/// The Session puts it around its transport only when it records metrics, so a Session without
/// metrics sends its exchanges to the transport directly. The transport's own task is handed
/// back unchanged: only the events are seen on their way to the request.
final class MeteredTransport: Transport {
    let base: any Transport
    let metrics: MetricsEventMonitor

    init(base: any Transport, metrics: MetricsEventMonitor) {
        self.base = base
        self.metrics = metrics
    }

    func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask {
        base.execute(request, events: MeteredExchangeEvents(events: events, metrics: metrics, method: request.method.rawValue))
    }

    func shutdown(completion: @escaping @Sendable () -> Void) {
        base.shutdown(completion: completion)
    }
}

/// Passes an exchange's events on, counting the body bytes sent and received.
///
/// Upload progress reports a running total; the counter takes the difference from the total
/// seen before. Events of one exchange never overlap, but they may come from different threads,
/// so the total sits behind a lock.
final class MeteredExchangeEvents: TransportEvents {
    private let events: any TransportEvents
    private let metrics: MetricsEventMonitor
    private let method: String
    private let bytesSentSoFar = NIOLockedValueBox<Int64>(0)

    init(events: any TransportEvents, metrics: MetricsEventMonitor, method: String) {
        self.events = events
        self.metrics = metrics
        self.method = method
    }

    func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {
        let delta = bytesSentSoFar.withLockedValue { sent -> Int64 in
            defer { sent = max(sent, totalBytesSent) }
            return totalBytesSent - sent
        }
        metrics.recordBytesSent(delta, method: method)
        events.transportDidSendBodyBytes(task, totalBytesSent: totalBytesSent, totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    func transportDidSendRequest(_ task: any TransportTask) {
        events.transportDidSendRequest(task)
    }

    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {
        events.transportDidReceive(task, head: head)
    }

    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
        metrics.recordBytesReceived(Int64(bodyPart.count), method: method)
        events.transportDidReceive(task, bodyPart: bodyPart)
    }

    func transportDidComplete(_ task: any TransportTask, error: URLError?) {
        events.transportDidComplete(task, error: error)
    }
}
