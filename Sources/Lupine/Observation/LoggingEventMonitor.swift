import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NIOConcurrencyHelpers

/// An `EventMonitor` that logs requests through swift-log.
///
/// Each exchange that goes out (every attempt and redirect hop) logs its request line and the
/// size of its body, if it has one; each attempt that ends logs its status, how long the request
/// has taken so far (`Timeline.requestDuration`, retries included) and the size of the response
/// body:
///
/// ```
/// → GET https://example.com/get
/// ← 200 GET https://example.com/get (0.042s, 312 bytes)
/// ```
///
/// The size (and body) of an attempt that is retried may be left out: lines are written
/// asynchronously, and a retry drops the body of the attempt before. The attempt that ends the
/// request always has them.
///
/// Transport errors, validation failures, failed URLRequest creation or adaptation, retries and
/// cancellations are logged too. Every line carries the request's id in the `lupine.request.id`
/// metadata. Bodies are logged only when `logsBodies` is true, in the `lupine.request.body` and
/// `lupine.response.body` metadata, cut after `maximumBodyLength` bytes; headers are never
/// logged (they often hold credentials).
///
/// ```swift
/// let session = Session(eventMonitors: [AlamofireNotifications(), LoggingEventMonitor()])
/// ```
///
/// Lines are written from the monitor's own serial queue, never from the queues of the Session.
public final class LoggingEventMonitor: EventMonitor {
    /// The serial queue the monitor logs from.
    public let queue = DispatchQueue(label: "lupine.monitor.logging")
    /// Where the lines go.
    public let logger: Logger
    /// Whether request and response bodies are logged.
    public let logsBodies: Bool
    /// The level of every line.
    public let level: Logger.Level
    /// How many bytes of a body are logged at most.
    public let maximumBodyLength: Int

    /// What each request's current exchange sent and received, from the events (which arrive in
    /// order on `queue`): read when the attempt ends, when the request may have moved on.
    private struct Exchange: Sendable {
        var sent: URLRequest
        var response: HTTPURLResponse?
    }

    private let exchanges = NIOLockedValueBox<[UUID: Exchange]>([:])

    /// Creates a logging monitor.
    ///
    /// - Parameters:
    ///   - logger: Where the lines go; by default a logger labelled `lupine` from the bootstrapped
    ///     `LoggingSystem`.
    ///   - logsBodies: Whether request and response bodies are logged (as UTF-8, invalid bytes
    ///     replaced). Off by default: bodies may hold personal data or secrets.
    ///   - level: The level of every line.
    ///   - maximumBodyLength: How many bytes of a body are logged at most; the rest is counted.
    public init(logger: Logger = Logger(label: "lupine"),
                logsBodies: Bool = false,
                level: Logger.Level = .info,
                maximumBodyLength: Int = 1024) {
        self.logger = logger
        self.logsBodies = logsBodies
        self.level = level
        self.maximumBodyLength = max(0, maximumBodyLength)
    }

    public func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) {
        exchanges.withLockedValue { $0[request.id] = Exchange(sent: urlRequest) }
        var metadata = Self.metadata(for: request)
        let body = urlRequest.httpBody
        if logsBodies, let body { metadata["lupine.request.body"] = .string(bodyText(body)) }
        let size = body.map { " (\(Self.bytes($0.count)))" } ?? ""
        log("→ \(Self.requestLine(urlRequest))\(size)", metadata)
    }

    public func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) {
        exchanges.withLockedValue { $0[request.id]?.response = response }
    }

    public func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        let exchange = exchanges.withLockedValue { $0.removeValue(forKey: request.id) }
        var metadata = Self.metadata(for: request)
        let line = Self.requestLine(exchange?.sent ?? request.lastRequest)
        let duration = String(format: "%.3fs", timeline.requestDuration)
        if let error {
            log("✗ \(line) failed after \(duration): \(Self.describe(error))", metadata)
            return
        }
        let body = Self.body(of: request, attempt: timeline.retryCount)
        if logsBodies, let body { metadata["lupine.response.body"] = .string(bodyText(body)) }
        let status = exchange?.response.map { "\($0.statusCode) " } ?? ""
        let size = body.map { ", \(Self.bytes($0.count))" } ?? ""
        log("← \(status)\(line) (\(duration)\(size))", metadata)
    }

    public func request(_ request: DataRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        data: Data?,
                        withResult result: Request.ValidationResult) {
        guard case let .failure(error) = result else { return }
        log("✗ \(Self.requestLine(urlRequest)) validation failed: \(Self.describe(error))", Self.metadata(for: request))
    }

    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        log("✗ creating the URLRequest failed: \(Self.describe(error))", Self.metadata(for: request))
    }

    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        log("✗ \(Self.requestLine(initialRequest)) adaptation failed: \(Self.describe(error))", Self.metadata(for: request))
    }

    public func requestIsRetrying(_ request: Request) {
        log("↻ retrying \(Self.requestLine(request.firstRequest)) (retry \(request.retryCount))", Self.metadata(for: request))
    }

    public func requestDidFinish(_ request: Request) {
        exchanges.withLockedValue { _ = $0.removeValue(forKey: request.id) }
    }

    public func requestDidCancel(_ request: Request) {
        log("✗ \(Self.requestLine(request.lastRequest)) cancelled", Self.metadata(for: request))
    }

    // MARK: Formatting

    private func log(_ text: String, _ metadata: Logger.Metadata) {
        logger.log(level: level, "\(text)", metadata: metadata)
    }

    private static func metadata(for request: Request) -> Logger.Metadata {
        ["lupine.request.id": .string(request.id.uuidString)]
    }

    /// `METHOD URL`, or a placeholder before any URLRequest exists.
    private static func requestLine(_ urlRequest: URLRequest?) -> String {
        guard let urlRequest else { return "(no URLRequest)" }
        return "\(urlRequest.httpMethod ?? "GET") \(urlRequest.url?.absoluteString ?? "(no URL)")"
    }

    private static func bytes(_ count: Int) -> String {
        count == 1 ? "1 byte" : "\(count) bytes"
    }

    private static func describe(_ error: any Error) -> String {
        (error as? AFError)?.errorDescription ?? String(describing: error)
    }

    /// The body as UTF-8 text, cut after `maximumBodyLength` bytes.
    private func bodyText(_ body: Data) -> String {
        guard body.count > maximumBodyLength else { return String(decoding: body, as: UTF8.self) }
        let text = String(decoding: body.prefix(maximumBodyLength), as: UTF8.self)
        return "\(text)… (\(Self.bytes(body.count)) in all)"
    }

    /// The body the request holds for the attempt numbered `attempt` (its retry count), or nil if
    /// it has none or has started another attempt. A retry increments `retryCount` before it
    /// clears the body, so a count still equal after reading the body means the body is the
    /// attempt's. The attempt that ends a request always has its body logged.
    private static func body(of request: Request, attempt: Int) -> Data? {
        guard let body = (request as? DataRequest)?.data, request.retryCount == attempt else { return nil }
        return body
    }
}
