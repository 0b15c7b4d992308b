import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// Answers exchanges with a `URLProtocol` class instead of the network: how Alamofire users stub
/// the network in their tests (`configuration.protocolClasses`, `URLProtocol.registerClass`).
///
/// The Session picks the class (see `Session.urlProtocolClass(for:request:)`); each `execute`
/// makes one instance of it with the class's `canonicalRequest(for:)` of the request and a client
/// that turns its callbacks into the exchange's events. Everything above the transport applies
/// as for the network: interceptors, redirects, validation, retries, the cache, monitors.
struct URLProtocolTransport: Transport {
    let protocolClass: URLProtocol.Type
    /// The request as the Session would send it (properties a protocol may read: cache policy,
    /// cookies handling...); the URL, method, header fields and body come from the exchange.
    let urlRequest: URLRequest
    /// The stored response a revalidation would use, handed to the protocol as URLSession hands
    /// the URL cache's.
    let cachedResponse: CachedURLResponse?
    /// The attempt's task, handed to the protocol as its `task`.
    let task: URLSessionTask?

    func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask {
        let exchange = URLProtocolExchange(protocolClass: protocolClass, baseRequest: urlRequest, transportRequest: request,
                                           cachedResponse: cachedResponse, task: task, events: events)
        exchange.start()
        return exchange
    }

    func shutdown(completion: @escaping @Sendable () -> Void) {
        completion()
    }
}

/// One URLProtocol load: the protocol's client, and the exchange's task.
///
/// Every step runs on one private serial queue, whichever thread the protocol calls its client
/// from: events never overlap and keep the order of the callbacks. A body part that arrives while
/// the consumer paused reading waits here (a protocol pushes its data without backpressure).
///
/// Callbacks map to events: a response to the head (a non-HTTP response becomes a 200 with its
/// MIME type and length), data to body parts, finishing to completion, a failure to a failed
/// completion that keeps the protocol's error, a redirect to a 3xx head followed by the request
/// the protocol chose, a valid cached response to that response. An authentication challenge
/// cannot be answered here: it fails the exchange with `URLError(.userAuthenticationRequired)`.
final class URLProtocolExchange: NSObject, URLProtocolClient, TransportTask, @unchecked Sendable {
    private enum Step {
        case head(TransportResponseHead)
        case data(Data)
        case finish
        case fail(URLError)
    }

    private let protocolClass: URLProtocol.Type
    private let baseRequest: URLRequest
    private let transportRequest: TransportRequest
    private let cachedResponse: CachedURLResponse?
    private let task: URLSessionTask?
    private let events: any TransportEvents
    private let queue = DispatchQueue(label: "lupine.urlprotocol")
    private let queueKey = DispatchSpecificKey<Void>()

    // Touched only on `queue`.
    private var urlProtocol: URLProtocol?
    private var steps: [Step] = []
    private var sawResponse = false
    private var isDone = false
    /// Set once a redirect, a failure or a finish was reported: later callbacks are ignored.
    private var protocolIsDone = false
    /// Dispatch timer sources, cancelled when the exchange ends or pauses. A cancelled
    /// `asyncAfter` work item stays queued until its time (a minute for the idle timeout, a week
    /// for the default resource timeout), holding its memory: with one per exchange and one per
    /// callback, the URLProtocol fuzz target reached 2 GiB. A cancelled source leaves at once.
    ///
    /// Their handlers hold the exchange strongly, not weakly, until cancelled: the exchange
    /// always ends (these timers end it, or a cancel does), and a weak reference's side table,
    /// which Swift points to only through an encoded field, looked leaked to LeakSanitizer.
    private var idleTimer: DispatchSourceTimer?
    private var deadlineTimer: DispatchSourceTimer?
    /// When the protocol last did something: the idle countdown runs from here.
    private var lastActivity = DispatchTime.now()
    /// What the consumer asks for now (set from any thread, read before each step).
    private let wantsPause = NIOLockedValueBox(false)
    private var isPaused: Bool { wantsPause.withLockedValue { $0 } }

    /// The request the protocol redirected to, read by the consumer when the redirect's head
    /// arrives (on this exchange's queue).
    private(set) var redirectRequest: URLRequest?
    /// The protocol's own error, read by the consumer at completion (on this exchange's queue):
    /// the request fails with it, as Alamofire's does, rather than with the URLError the
    /// transport interface carries.
    private(set) var protocolFailure: AFError?

    init(protocolClass: URLProtocol.Type,
         baseRequest: URLRequest,
         transportRequest: TransportRequest,
         cachedResponse: CachedURLResponse?,
         task: URLSessionTask?,
         events: any TransportEvents) {
        self.protocolClass = protocolClass
        self.baseRequest = baseRequest
        self.transportRequest = transportRequest
        self.cachedResponse = cachedResponse
        self.task = task
        self.events = events
        super.init()
        queue.setSpecific(key: queueKey, value: ())
    }

    // MARK: TransportTask

    func start() {
        queue.async {
            self.armDeadline()
            switch self.transportRequest.body {
            case let .stream(_, nextChunk)?:
                // A protocol reads a body from the URLRequest: the chunks are gathered first,
                // off the cooperative pool (see `DispatchTaskExecutor`).
                Task(executorPreference: DispatchTaskExecutor(label: "lupine.request.body")) {
                    var gathered = Data()
                    do {
                        while let chunk = try await nextChunk() { gathered.append(chunk) }
                    } catch {
                        self.queue.async { self.complete(URLError(.cannotOpenFile)) }
                        return
                    }
                    let body = gathered
                    self.queue.async { self.startLoading(body: .data(body)) }
                }
            default:
                self.startLoading(body: self.transportRequest.body)
            }
        }
    }

    func cancel() {
        onQueue { self.complete(URLError(.cancelled)) }
    }

    func pauseReading() {
        wantsPause.withLockedValue { $0 = true }
        // Paused by the consumer: its choice, not the protocol's silence.
        onQueue {
            self.idleTimer?.cancel()
            self.idleTimer = nil
        }
    }

    func resumeReading() {
        wantsPause.withLockedValue { $0 = false }
        queue.async {
            guard !self.isDone else { return }
            self.armIdleTimer()
            self.drain()
        }
    }

    // MARK: Loading

    private func startLoading(body: TransportRequestBody?) {
        guard !isDone else { return }
        let request = protocolClass.canonicalRequest(for: requestForProtocol(body: body))
        let loader = protocolClass.init(request: request, cachedResponse: cachedResponse, client: self)
        loader.task = task
        urlProtocol = loader
        // The request is handed over whole: for the request's events and progress, it is sent.
        if let length = body?.knownLength, length > 0 {
            events.transportDidSendBodyBytes(self, totalBytesSent: length, totalBytesExpectedToSend: length)
        }
        events.transportDidSendRequest(self)
        armIdleTimer()
        loader.startLoading()
    }

    /// The URLRequest the protocol sees: the Session's request with the exchange's URL, method,
    /// header fields (cookies and conditional fields included) and body.
    private func requestForProtocol(body: TransportRequestBody?) -> URLRequest {
        var request = baseRequest
        request.url = transportRequest.url
        request.httpMethod = transportRequest.method.rawValue
        var fields: [String: String] = [:]
        for field in transportRequest.headerFields {
            let existing = fields.first { $0.key.lupineEqualsIgnoringASCIICase(field.name) }
            if let existing {
                fields[existing.key] = existing.value + ", " + field.value
            } else {
                fields[field.name] = field.value
            }
        }
        request.allHTTPHeaderFields = fields
        request.timeoutInterval = transportRequest.idleTimeout
        switch body {
        case let .data(data)?:
            request.httpBody = data
        case let .file(url)?:
            request.httpBodyStream = InputStream(url: url)
        case .stream?, nil:
            request.httpBody = nil
        }
        return request
    }

    // MARK: Delivery

    private func enqueue(_ step: Step) {
        guard !isDone else { return }
        steps.append(step)
        armIdleTimer()
        drain()
    }

    private func drain() {
        while !isPaused, !isDone, !steps.isEmpty {
            let step = steps.removeFirst()
            switch step {
            case let .head(head):
                // A redirect or a valid cached response after a response: a second response.
                guard !sawResponse else {
                    complete(Self.failure(.badServerResponse, "The URLProtocol sent a second response."))
                    return
                }
                sawResponse = true
                events.transportDidReceive(self, head: head)
            case let .data(data):
                guard sawResponse else {
                    complete(Self.failure(.badServerResponse, "The URLProtocol sent data before a response."))
                    return
                }
                events.transportDidReceive(self, bodyPart: data)
            case .finish:
                guard sawResponse else {
                    complete(Self.failure(.badServerResponse, "The URLProtocol finished loading without a response."))
                    return
                }
                complete(nil)
                return
            case let .fail(error):
                complete(error)
                return
            }
        }
    }

    private func complete(_ error: URLError?) {
        guard !isDone else { return }
        isDone = true
        protocolIsDone = true
        steps.removeAll()
        idleTimer?.cancel()
        idleTimer = nil
        deadlineTimer?.cancel()
        deadlineTimer = nil
        if let loader = urlProtocol {
            urlProtocol = nil
            // Later, not from inside a callback the protocol may still be in. URLProtocol is not
            // Sendable; the instance is used from this queue only.
            nonisolated(unsafe) let stopping = loader
            queue.async { stopping.stopLoading() }
        }
        events.transportDidComplete(self, error: error)
    }

    // MARK: Timeouts

    /// Notes activity: the idle timeout counts from now. One timer serves the countdown; it is
    /// made when the countdown starts (or restarts after a pause), not at every callback.
    private func armIdleTimer() {
        guard !isDone, !isPaused, transportRequest.idleTimeout > 0 else { return }
        lastActivity = .now()
        guard idleTimer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { self.idleTimerFired() }
        timer.schedule(deadline: lastActivity + transportRequest.idleTimeout)
        idleTimer = timer
        timer.resume()
    }

    /// Times out when the protocol has been silent for the whole timeout, else fires again when
    /// it will have been.
    private func idleTimerFired() {
        guard !isDone, !isPaused else { return }
        let due = lastActivity + transportRequest.idleTimeout
        if DispatchTime.now() >= due {
            complete(Self.failure(.timedOut, nil))
        } else {
            idleTimer?.schedule(deadline: due)
        }
    }

    private func armDeadline() {
        guard let deadline = transportRequest.deadline else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { self.complete(Self.failure(.timedOut, nil)) }
        timer.schedule(deadline: .now() + max(0, deadline.timeIntervalSinceNow))
        deadlineTimer = timer
        timer.resume()
    }

    // MARK: URLProtocolClient

    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {
        callback(from: `protocol`) { $0.enqueue(.head(Self.head(of: response))) }
    }

    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) {
        callback(from: `protocol`) { $0.enqueue(.data(data)) }
    }

    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) {
        callback(from: `protocol`) { exchange in
            exchange.protocolIsDone = true
            exchange.enqueue(.finish)
        }
    }

    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) {
        callback(from: `protocol`) { exchange in
            exchange.protocolIsDone = true
            exchange.protocolFailure = error.asAFError ?? .sessionTaskFailed(error: error)
            let urlError = error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
            exchange.enqueue(.fail(urlError))
        }
    }

    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        callback(from: `protocol`) { exchange in
            exchange.protocolIsDone = true
            exchange.redirectRequest = request
            var head = Self.head(of: redirectResponse)
            // The consumer follows redirects by status and Location: a redirect the protocol
            // reports is one, whatever its response says.
            if !(300..<400).contains(head.statusCode) { head.statusCode = 302 }
            head.headerFields.removeAll { $0.name.lupineEqualsIgnoringASCIICase("Location") }
            head.headerFields.append(HTTPHeader(name: "Location", value: request.url?.absoluteString ?? ""))
            exchange.enqueue(.head(head))
            exchange.enqueue(.finish)
        }
    }

    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {
        callback(from: `protocol`) { exchange in
            exchange.protocolIsDone = true
            exchange.enqueue(.head(Self.head(of: cachedResponse.response)))
            if !cachedResponse.data.isEmpty { exchange.enqueue(.data(cachedResponse.data)) }
            exchange.enqueue(.finish)
        }
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
        callback(from: `protocol`) { exchange in
            exchange.protocolIsDone = true
            challenge.sender?.cancel(challenge)
            let method = challenge.protectionSpace.authenticationMethod
            exchange.enqueue(.fail(Self.failure(.userAuthenticationRequired,
                                                "The URLProtocol asked for authentication (\(method)), which Lupine "
                                                    + "does not answer for URLProtocol classes: answer the request "
                                                    + "without a challenge, with the credential in its header fields.")))
        }
    }

    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}

    // MARK: Helpers

    /// Runs `body` on the queue for a callback of the current protocol; callbacks from another
    /// instance (one already stopped) or after the protocol finished are ignored.
    private func callback(from loader: URLProtocol, _ body: @escaping (URLProtocolExchange) -> Void) {
        nonisolated(unsafe) let body = body
        let loader = ObjectIdentifier(loader)
        onQueue {
            guard let current = self.urlProtocol, ObjectIdentifier(current) == loader, !self.protocolIsDone else { return }
            body(self)
        }
    }

    private func onQueue(_ body: @escaping @Sendable () -> Void) {
        if DispatchQueue.getSpecific(key: queueKey) != nil {
            body()
        } else {
            queue.async(execute: body)
        }
    }

    private static func head(of response: URLResponse) -> TransportResponseHead {
        if let http = response as? HTTPURLResponse {
            let fields = http.allHeaderFields.map { HTTPHeader(name: String(describing: $0.key), value: String(describing: $0.value)) }
            return TransportResponseHead(statusCode: http.statusCode, headerFields: fields)
        }
        var fields: [HTTPHeader] = []
        if let mimeType = response.mimeType {
            let charset = response.textEncodingName.map { "; charset=\($0)" } ?? ""
            fields.append(HTTPHeader(name: "Content-Type", value: mimeType + charset))
        }
        if response.expectedContentLength >= 0 {
            fields.append(HTTPHeader(name: "Content-Length", value: String(response.expectedContentLength)))
        }
        return TransportResponseHead(statusCode: 200, headerFields: fields)
    }

    private static func failure(_ code: URLError.Code, _ description: String?) -> URLError {
        URLError(code, userInfo: [NSLocalizedDescriptionKey: description ?? TransportErrorMapping.description(of: code)])
    }
}
