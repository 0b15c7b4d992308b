import Foundation

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
/// Events of one exchange never overlap (the `TransportEvents` contract), so the running total
/// of bytes sent needs no lock of its own; it is kept in a box only to satisfy `Sendable`.
final class MeteredExchangeEvents: TransportEvents, @unchecked Sendable {
    private let events: any TransportEvents
    private let metrics: MetricsEventMonitor
    private let method: String
    private var bytesSentSoFar: Int64 = 0

    init(events: any TransportEvents, metrics: MetricsEventMonitor, method: String) {
        self.events = events
        self.metrics = metrics
        self.method = method
    }

    func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {
        let delta = totalBytesSent - bytesSentSoFar
        bytesSentSoFar = max(bytesSentSoFar, totalBytesSent)
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
