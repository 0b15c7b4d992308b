import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import Tracing

/// Traces requests with swift-distributed-tracing: one client span per request, its attempts,
/// redirect hops and retries as span events, and the span's context sent with every exchange.
///
/// A Session traces its requests with no set-up beyond bootstrapping a tracer: when
/// `InstrumentationSystem.tracer` is a real tracer at the time the Session is created (one
/// bootstrapped with `InstrumentationSystem.bootstrap`, or bound with `withTracer`), the Session
/// adds a `TracingEventMonitor` of its own. Pass one in `eventMonitors` to choose the tracer
/// yourself; the Session then adds none. With no tracer (the default `NoOpTracer`), the Session
/// does no tracing work at all.
///
/// The span:
/// - starts when the request is made, as a child of the caller's `ServiceContext.current` at that
///   moment (in `session.request(...)`), and ends when the request finishes, retries included;
/// - is named after the method (`GET`), of kind `.client`, with OpenTelemetry's HTTP client
///   attributes: `http.request.method`, `url.full` (with `REDACTED` for user information and for
///   signature query values), `server.address`, `server.port`, `http.response.status_code`,
///   `http.request.resend_count` (retries and redirects), and `error.type` with an error status
///   when the request failed or its last status is 400 or above;
/// - records `lupine.request.sent` and `lupine.response.received` events per exchange,
///   `lupine.redirect` per redirect hop followed, `lupine.retry` per retry, and
///   `lupine.attempt.failed` for an attempt that ends without a response.
///
/// The span's context is injected into each attempt's URLRequest after the interceptors adapted
/// it, through the tracer's injector (or, for the Session's own monitor, through the bootstrapped
/// instrument's): with an OpenTelemetry tracer, that is the `traceparent` header field, which
/// redirect hops carry along. Adapters and retriers run with `ServiceContext.current` set to the
/// span's context, so spans they start are children of the request's.
public final class TracingEventMonitor: EventMonitor {
    /// The tracer that makes the spans.
    public let tracer: any Tracer
    /// What injects the span's context into requests: the tracer, or the bootstrapped instrument.
    private let instrument: any Instrument
    /// The spans of the requests not yet finished, by request id.
    private let spans = NIOLockedValueBox<[UUID: RequestSpan]>([:])
    /// How `url.full` is written: OpenTelemetry asks for credentials and signatures to be hidden.
    private let redaction = LogRedaction(headerNames: [],
                                         queryKeys: ["AWSAccessKeyId", "Signature", "sig", "X-Goog-Signature"],
                                         mask: "REDACTED", masksUserAndPassword: true)

    /// A request's span, and what the events need to know of the request so far.
    private struct RequestSpan: Sendable {
        let span: any Span
        /// Exchanges sent in the current attempt: the second and later are redirect hops.
        var exchangesInAttempt = 0
        /// Redirect hops followed and retries made, across the request.
        var resendCount = 0
    }

    /// Creates a monitor that traces with `tracer`.
    ///
    /// - Parameter tracer: The tracer; by default the one active now (bootstrapped, or bound
    ///   with `withTracer`).
    public init(tracer: any Tracer = InstrumentationSystem.tracer) {
        self.tracer = tracer
        instrument = tracer
    }

    /// The Session's own monitor: spans from `tracer`, context injected through `instrument`
    /// (the bootstrapped instrument may add other propagators to the tracer's).
    init(tracer: any Tracer, instrument: any Instrument) {
        self.tracer = tracer
        self.instrument = instrument
    }

    /// A monitor for a new Session: nil when no tracer is active.
    static func makeIfTracing() -> TracingEventMonitor? {
        let tracer = InstrumentationSystem.tracer
        guard !(tracer is NoOpTracer) else { return nil }
        return TracingEventMonitor(tracer: tracer, instrument: InstrumentationSystem.instrument)
    }

    // MARK: Hooks the Session calls directly (not through the event queue)

    /// Starts the span of a request just made, on the caller's thread, so that its parent is
    /// the caller's `ServiceContext.current`.
    func requestWasCreated(_ request: Request) {
        let parent = ServiceContext.current ?? .topLevel
        let span = tracer.startSpan("HTTP", context: parent, ofKind: .client)
        spans.withLockedValue { $0[request.id] = RequestSpan(span: span) }
    }

    /// Names the span after the method, sets the attributes of the request's target, and
    /// injects the span's context into `urlRequest`: called for each attempt's final URLRequest.
    func prepare(_ urlRequest: inout URLRequest, for request: Request) {
        guard let span = spans.withLockedValue({ $0[request.id]?.span }) else { return }
        let method = TelemetryNames.method(urlRequest.httpMethod)
        span.operationName = method == "_OTHER" ? "HTTP" : method
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method
            if method == "_OTHER", let original = urlRequest.httpMethod {
                attributes["http.request.method_original"] = original
            }
            if let url = urlRequest.url { setTargetAttributes(of: url, on: &attributes) }
        }
        instrument.inject(span.context, into: &urlRequest, using: URLRequestHeaderInjector())
    }

    /// Runs `body` with `ServiceContext.current` set to the context of `request`'s span.
    func withContext(of request: Request, _ body: () -> Void) {
        guard let context = spans.withLockedValue({ $0[request.id]?.span.context }) else {
            body()
            return
        }
        ServiceContext.withValue(context, operation: body)
    }

    // MARK: Events

    public func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) {
        guard let (span, exchange) = update(request, { state -> Int in
            state.exchangesInAttempt += 1
            if state.exchangesInAttempt > 1 { state.resendCount += 1 }
            return state.exchangesInAttempt
        }) else { return }
        var attributes: SpanAttributes = [:]
        if let url = urlRequest.url { attributes["url.full"] = redaction.redact(url) }
        if exchange > 1 {
            span.addEvent(SpanEvent(name: "lupine.redirect", attributes: attributes))
            if let url = urlRequest.url {
                span.updateAttributes { setTargetAttributes(of: url, on: &$0) }
            }
        }
        span.addEvent(SpanEvent(name: "lupine.request.sent", attributes: attributes))
    }

    public func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) {
        guard let span = spans.withLockedValue({ $0[request.id]?.span }) else { return }
        var attributes: SpanAttributes = [:]
        attributes["http.response.status_code"] = response.statusCode
        span.addEvent(SpanEvent(name: "lupine.response.received", attributes: attributes))
    }

    public func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        guard let (span, _) = update(request, { $0.exchangesInAttempt = 0 }) else { return }
        guard let error else { return }
        var attributes: SpanAttributes = [:]
        attributes["error.type"] = TelemetryNames.errorType(error)
        span.addEvent(SpanEvent(name: "lupine.attempt.failed", attributes: attributes))
    }

    public func requestIsRetrying(_ request: Request) {
        guard let (span, resendCount) = update(request, { state -> Int in
            state.resendCount += 1
            return state.resendCount
        }) else { return }
        var attributes: SpanAttributes = [:]
        attributes["http.request.resend_count"] = resendCount
        span.addEvent(SpanEvent(name: "lupine.retry", attributes: attributes))
    }

    public func requestDidFinish(_ request: Request) {
        guard let state = spans.withLockedValue({ $0.removeValue(forKey: request.id) }) else { return }
        let span = state.span
        let statusCode = request.response?.statusCode
        let error = request.error
        span.updateAttributes { attributes in
            if let statusCode { attributes["http.response.status_code"] = statusCode }
            if state.resendCount > 0 { attributes["http.request.resend_count"] = state.resendCount }
            if let error {
                attributes["error.type"] = TelemetryNames.errorType(error)
            } else if let statusCode, statusCode >= 400 {
                attributes["error.type"] = String(statusCode)
            }
        }
        if let error {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: error.localizedDescription))
        } else if let statusCode, statusCode >= 400 {
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    // MARK: Helpers

    /// Applies `change` to the request's state; nil when the request has no span.
    private func update<Result>(_ request: Request, _ change: (inout RequestSpan) -> Result) -> (any Span, Result)? {
        spans.withLockedValue { spans -> (any Span, Result)? in
            guard var state = spans[request.id] else { return nil }
            let result = change(&state)
            spans[request.id] = state
            return (state.span, result)
        }
    }

    private func setTargetAttributes(of url: URL, on attributes: inout SpanAttributes) {
        attributes["url.full"] = redaction.redact(url)
        if let host = url.host { attributes["server.address"] = host }
        if let port = url.port ?? Self.defaultPort(of: url.scheme) { attributes["server.port"] = port }
    }

    private static func defaultPort(of scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http", "ws": 80
        case "https", "wss": 443
        default: nil
        }
    }
}

/// Writes propagation fields (`traceparent`, `tracestate`, baggage...) into a URLRequest's header.
struct URLRequestHeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout URLRequest) {
        request.setValue(value, forHTTPHeaderField: key)
    }
}
