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
/// cancellations are logged too. What a line says is also in its metadata, for log backends that
/// index fields: `lupine.request.id` on every line; `lupine.request.method`,
/// `lupine.request.host` and `lupine.request.url` once a URLRequest exists;
/// `lupine.response.status` and `lupine.request.duration` (seconds) when an attempt ends.
///
/// Credentials stay out of the log. URLs are written with their user information
/// (`user:password@`) and the values of the query items named in `redactedQueryKeys` replaced
/// by `***`. Header fields are logged only when `logsHeaders` is true (in
/// `lupine.request.headers` and `lupine.response.headers`), with the values of
/// `redactedHeaders` replaced. Bodies are logged only when `logsBodies` is true, in the
/// `lupine.request.body` and `lupine.response.body` metadata, cut after `maximumBodyLength`
/// bytes; they are not redacted.
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
    /// Whether request and response header fields are logged (sensitive values replaced).
    public let logsHeaders: Bool
    /// Header fields whose values are replaced by `***` (names compared without case).
    public let redactedHeaders: Set<String>
    /// Query items whose values are replaced by `***` in logged URLs (names compared without case).
    public let redactedQueryKeys: Set<String>

    /// The header fields redacted by default: those that carry credentials or session cookies.
    public static let defaultRedactedHeaders: Set<String> = [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key", "X-Auth-Token",
        "X-CSRF-Token", "X-Amz-Security-Token",
    ]

    /// The query keys redacted by default: the usual names of tokens, keys, secrets and signatures.
    public static let defaultRedactedQueryKeys: Set<String> = [
        "access_token", "refresh_token", "id_token", "token", "api_key", "apikey", "key", "password",
        "secret", "client_secret", "code", "signature", "sig", "X-Amz-Signature", "X-Amz-Credential",
        "X-Amz-Security-Token",
    ]

    private let redaction: LogRedaction

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
    ///   - logsHeaders: Whether request and response header fields are logged. Off by default.
    ///   - redactedHeaders: Header fields whose values are never logged.
    ///   - redactedQueryKeys: Query items whose values are never logged.
    public init(logger: Logger = Logger(label: "lupine"),
                logsBodies: Bool = false,
                level: Logger.Level = .info,
                maximumBodyLength: Int = 1024,
                logsHeaders: Bool = false,
                redactedHeaders: Set<String> = LoggingEventMonitor.defaultRedactedHeaders,
                redactedQueryKeys: Set<String> = LoggingEventMonitor.defaultRedactedQueryKeys) {
        self.logger = logger
        self.logsBodies = logsBodies
        self.level = level
        self.maximumBodyLength = max(0, maximumBodyLength)
        self.logsHeaders = logsHeaders
        self.redactedHeaders = redactedHeaders
        self.redactedQueryKeys = redactedQueryKeys
        redaction = LogRedaction(headerNames: redactedHeaders, queryKeys: redactedQueryKeys)
    }

    public func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) {
        exchanges.withLockedValue { $0[request.id] = Exchange(sent: urlRequest) }
        var metadata = metadata(for: request, urlRequest: urlRequest)
        let body = urlRequest.httpBody
        if logsBodies, let body { metadata["lupine.request.body"] = .string(bodyText(body)) }
        if logsHeaders { metadata["lupine.request.headers"] = headers(urlRequest.allHTTPHeaderFields ?? [:]) }
        let size = body.map { " (\(Self.bytes($0.count)))" } ?? ""
        log("→ \(requestLine(urlRequest))\(size)", metadata)
    }

    public func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) {
        exchanges.withLockedValue { $0[request.id]?.response = response }
    }

    public func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        let exchange = exchanges.withLockedValue { $0.removeValue(forKey: request.id) }
        let sent = exchange?.sent ?? request.lastRequest
        var metadata = metadata(for: request, urlRequest: sent)
        let line = requestLine(sent)
        let seconds = String(format: "%.3f", timeline.requestDuration)
        metadata["lupine.request.duration"] = .string(seconds)
        if let error {
            log("✗ \(line) failed after \(seconds)s: \(describe(error))", metadata)
            return
        }
        let body = Self.body(of: request, attempt: timeline.retryCount)
        if logsBodies, let body { metadata["lupine.response.body"] = .string(bodyText(body)) }
        if let response = exchange?.response {
            metadata["lupine.response.status"] = .stringConvertible(response.statusCode)
            if logsHeaders { metadata["lupine.response.headers"] = headers(response.allHeaderFields) }
        }
        let status = exchange?.response.map { "\($0.statusCode) " } ?? ""
        let size = body.map { ", \(Self.bytes($0.count))" } ?? ""
        log("← \(status)\(line) (\(seconds)s\(size))", metadata)
    }

    public func request(_ request: DataRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        data: Data?,
                        withResult result: Request.ValidationResult) {
        guard case let .failure(error) = result else { return }
        var metadata = metadata(for: request, urlRequest: urlRequest)
        metadata["lupine.response.status"] = .stringConvertible(response.statusCode)
        log("✗ \(requestLine(urlRequest)) validation failed: \(describe(error))", metadata)
    }

    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        log("✗ creating the URLRequest failed: \(describe(error))", metadata(for: request, urlRequest: nil))
    }

    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        log("✗ \(requestLine(initialRequest)) adaptation failed: \(describe(error))",
            metadata(for: request, urlRequest: initialRequest))
    }

    public func requestIsRetrying(_ request: Request) {
        let first = request.firstRequest
        log("↻ retrying \(requestLine(first)) (retry \(request.retryCount))", metadata(for: request, urlRequest: first))
    }

    public func requestDidFinish(_ request: Request) {
        exchanges.withLockedValue { _ = $0.removeValue(forKey: request.id) }
    }

    public func requestDidCancel(_ request: Request) {
        let last = request.lastRequest
        log("✗ \(requestLine(last)) cancelled", metadata(for: request, urlRequest: last))
    }

    // MARK: Formatting

    private func log(_ text: String, _ metadata: Logger.Metadata) {
        logger.log(level: level, "\(text)", metadata: metadata)
    }

    /// The request's id, and the method, host and (redacted) URL of `urlRequest` when there is one.
    private func metadata(for request: Request, urlRequest: URLRequest?) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["lupine.request.id": .string(request.id.uuidString)]
        guard let urlRequest else { return metadata }
        metadata["lupine.request.method"] = .string(urlRequest.httpMethod ?? "GET")
        if let url = urlRequest.url {
            if let host = url.host { metadata["lupine.request.host"] = .string(host) }
            metadata["lupine.request.url"] = .string(redaction.redact(url))
        }
        return metadata
    }

    /// `METHOD URL` (the URL redacted), or a placeholder before any URLRequest exists.
    private func requestLine(_ urlRequest: URLRequest?) -> String {
        guard let urlRequest else { return "(no URLRequest)" }
        return "\(urlRequest.httpMethod ?? "GET") \(urlRequest.url.map(redaction.redact) ?? "(no URL)")"
    }

    /// Header fields as metadata, sensitive values replaced.
    private func headers(_ fields: [AnyHashable: Any]) -> Logger.MetadataValue {
        var logged: Logger.Metadata = [:]
        for (key, value) in fields {
            let name = "\(key)"
            logged[name] = .string(redaction.redact(headerValue: "\(value)", name: name))
        }
        return .dictionary(logged)
    }

    private static func bytes(_ count: Int) -> String {
        count == 1 ? "1 byte" : "\(count) bytes"
    }

    /// An error's description, with the credentials of any URL it quotes removed.
    private func describe(_ error: any Error) -> String {
        redaction.redactUserInfo(in: (error as? AFError)?.errorDescription ?? String(describing: error))
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
