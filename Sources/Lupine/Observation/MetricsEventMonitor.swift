import CoreMetrics
import Metrics
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// Records client metrics with swift-metrics: finished requests, their duration, requests in
/// flight, retries, and body bytes sent and received.
///
/// A Session records metrics with no set-up beyond bootstrapping a backend: when
/// `MetricsSystem.factory` is a real factory at the time the Session is created, the Session adds
/// a `MetricsEventMonitor` of its own. Pass one in `eventMonitors` to choose the factory yourself;
/// the Session then adds none. With no backend (the default no-op factory), the Session does no
/// metrics work at all.
///
/// | metric | type | dimensions |
/// |---|---|---|
/// | `lupine_http_client_requests_total` | counter, per finished request | `method`, `status_class` |
/// | `lupine_http_client_request_duration` | timer, start to end of transfer, retries included | `method`, `status_class` |
/// | `lupine_http_client_requests_in_flight` | meter, resumed and not finished | none |
/// | `lupine_http_client_retries_total` | counter | `method` |
/// | `lupine_http_client_request_body_bytes_total` | counter, bytes of request bodies sent | `method` |
/// | `lupine_http_client_response_body_bytes_total` | counter, bytes of response bodies received (decoded) | `method` |
/// | `lupine_http_client_connections` | meter, connections of the Session's `ConnectionEngine` open now | none |
/// | `lupine_http_client_connections_opened_total` | counter, connections the engine opened | none |
/// | `lupine_http_client_connections_closed_total` | counter, connections the engine closed | none |
///
/// Dimensions take a bounded set of values, so that a backend's series stay few whatever URLs
/// are requested: `method` is one of the methods of RFC 9110 or `_OTHER`; `status_class` is
/// `1xx` to `5xx`, or `none` when no response arrived. No URL, host or path is ever a dimension.
/// The byte counters count what crossed the Session's transport, so a response answered from the
/// HTTP cache adds nothing to them.
public final class MetricsEventMonitor: EventMonitor {
    /// The factory that makes the metrics.
    public let factory: any MetricsFactory
    /// The first resume of each request still in flight.
    private let inFlightRequests = NIOLockedValueBox<Set<UUID>>([])
    /// Metrics already made, by label and dimension values: the dimensions are bounded, so this is.
    private let counters = NIOLockedValueBox<[String: Counter]>([:])
    private let timers = NIOLockedValueBox<[String: CoreMetrics.Timer]>([:])
    private let inFlight: Meter
    private let openConnections: Meter
    /// The engine's opened and closed totals last recorded.
    private let connectionTotals = NIOLockedValueBox<(opened: Int, closed: Int)>((0, 0))

    /// Creates a monitor that records to `factory`.
    ///
    /// - Parameter factory: The metrics backend; by default the bootstrapped one.
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        inFlight = Meter(label: Self.inFlightLabel, dimensions: [], factory: factory)
        openConnections = Meter(label: Self.openConnectionsLabel, dimensions: [], factory: factory)
    }

    /// A monitor for a new Session: nil when no metrics backend is bootstrapped.
    static func makeIfRecording() -> MetricsEventMonitor? {
        let factory = MetricsSystem.factory
        guard !(factory is NOOPMetricsHandler) else { return nil }
        return MetricsEventMonitor(factory: factory)
    }

    static let requestsLabel = "lupine_http_client_requests_total"
    static let durationLabel = "lupine_http_client_request_duration"
    static let inFlightLabel = "lupine_http_client_requests_in_flight"
    static let retriesLabel = "lupine_http_client_retries_total"
    static let bytesSentLabel = "lupine_http_client_request_body_bytes_total"
    static let bytesReceivedLabel = "lupine_http_client_response_body_bytes_total"
    static let openConnectionsLabel = "lupine_http_client_connections"
    static let connectionsOpenedLabel = "lupine_http_client_connections_opened_total"
    static let connectionsClosedLabel = "lupine_http_client_connections_closed_total"

    // MARK: Events

    public func requestDidResume(_ request: Request) {
        let isFirst = inFlightRequests.withLockedValue { $0.insert(request.id).inserted }
        if isFirst { inFlight.increment() }
    }

    public func requestIsRetrying(_ request: Request) {
        counter(Self.retriesLabel, [("method", TelemetryNames.method(request.lastRequest?.httpMethod))]).increment()
    }

    public func requestDidFinish(_ request: Request) {
        let wasInFlight = inFlightRequests.withLockedValue { $0.remove(request.id) != nil }
        if wasInFlight { inFlight.decrement() }
        let dimensions = [
            ("method", TelemetryNames.method((request.lastRequest ?? request.request)?.httpMethod)),
            ("status_class", TelemetryNames.statusClass(request.response?.statusCode)),
        ]
        counter(Self.requestsLabel, dimensions).increment()
        let timeline = request.timeline
        if timeline.requestStartTime != nil, timeline.requestCompletedTime != nil {
            timer(Self.durationLabel, dimensions).record(max(0, timeline.requestDuration))
        }
    }

    // MARK: Bytes, counted by the Session's transport

    /// Adds `count` body bytes sent by a request with `method`.
    func recordBytesSent(_ count: Int64, method: String) {
        guard count > 0 else { return }
        counter(Self.bytesSentLabel, [("method", TelemetryNames.method(method))]).increment(by: count)
    }

    /// Adds `count` body bytes received by a request with `method`.
    func recordBytesReceived(_ count: Int64, method: String) {
        guard count > 0 else { return }
        counter(Self.bytesReceivedLabel, [("method", TelemetryNames.method(method))]).increment(by: count)
    }

    // MARK: Connections, counted by the Session's engine

    /// The engine's connection counts: `open` now, and `opened` and `closed` since it started.
    /// The counters move by the difference from the counts seen before.
    func recordConnectionCounts(open: Int, opened: Int, closed: Int) {
        let (newlyOpened, newlyClosed) = connectionTotals.withLockedValue { totals -> (Int, Int) in
            defer { totals = (max(totals.opened, opened), max(totals.closed, closed)) }
            return (opened - totals.opened, closed - totals.closed)
        }
        openConnections.set(open)
        if newlyOpened > 0 { counter(Self.connectionsOpenedLabel, []).increment(by: newlyOpened) }
        if newlyClosed > 0 { counter(Self.connectionsClosedLabel, []).increment(by: newlyClosed) }
    }

    // MARK: Helpers

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        let key = Self.key(label, dimensions)
        return counters.withLockedValue { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = counter
            return counter
        }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        let key = Self.key(label, dimensions)
        return timers.withLockedValue { timers in
            if let timer = timers[key] { return timer }
            let timer = CoreMetrics.Timer(label: label, dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
            timers[key] = timer
            return timer
        }
    }

    private static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        dimensions.reduce(label) { "\($0)|\($1.1)" }
    }
}
