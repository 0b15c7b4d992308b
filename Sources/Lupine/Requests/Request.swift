import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import Synchronization

/// One logical HTTP request and everything it goes through: URLRequest creation, adaptation, the
/// exchange on the transport (redirects included), validation, retries and response serialization.
///
/// Requests are made by a `Session`, never directly. Equality and hashing use `id`.
public class Request: @unchecked Sendable {
    /// Lifecycle state.
    public enum State {
        /// Created, never resumed.
        case initialized
        /// `resume()` was called; the exchange runs.
        case resumed
        /// `suspend()` was called; nothing is sent and the response body is not read.
        case suspended
        /// `cancel()` was called; terminal for resume and suspend.
        case cancelled
        /// All response serializers have completed.
        case finished
    }

    /// Identity of the request.
    public let id: UUID
    /// Serial queue for the request's internal work.
    public let underlyingQueue: DispatchQueue
    /// Queue on which response serializers run (the Session's `serializationQueue`).
    public let serializationQueue: DispatchQueue
    /// Per-request override of `Session.startRequestsImmediately`; nil defers to the Session.
    public let shouldAutomaticallyResume: Bool?
    /// The Session that owns the request (weak).
    public var delegate: (any RequestDelegate)? { environment?.requestDelegate }
    /// The Session that owns the request, through the narrow view the request needs (weak); a
    /// test double in the tests.
    private(set) weak var environment: (any RequestEnvironment)?
    /// The Session's queues and fallbacks, read as values.
    let defaults: RequestDefaults

    /// Body upload progress; zeroed on retry. The same object on every read.
    public var uploadProgress: Progress { uploadCounts.progress }
    /// Response download progress; zeroed on retry. The same object on every read.
    public var downloadProgress: Progress { downloadCounts.progress }
    let uploadCounts = LazyProgress()
    let downloadCounts = LazyProgress()

    /// Progress callback type.
    public typealias ProgressHandler = @Sendable (_ progress: Progress) -> Void

    let sessionMonitor: CompositeEventMonitor?
    /// Where handlers given the default queue run (the Session's queue on Linux).
    let defaultQueue: DispatchQueue
    /// Inline in the request: one allocation fewer than a boxed lock.
    let mutableState: Mutex<RequestMutableState>
    /// Why the response of the exchange in flight is not read right now (suspended, a handler
    /// deciding, a consumer behind): the one place that pauses and resumes the transport.
    let readDemand = ReadDemand()
    /// Whether `eventMonitor(_:)` added monitors: until then an event reads no lock for them.
    let hasAddedMonitors = Synchronization.Atomic(false)
    /// Callers inside a response-handler call that scheduled the request's start (see
    /// `appendResponseHandler`): the end of an exchange waits until they have left.
    let callersSchedulingStart = Synchronization.Atomic(0)
    /// Whether the start ran while its caller was still inside the call that scheduled it: an
    /// answer that comes at once then waits a moment for what that caller chains next.
    let callerWasInsideAtStart = Synchronization.Atomic(false)

    init(context: RequestContext) {
        id = context.id
        underlyingQueue = context.underlyingQueue
        serializationQueue = context.serializationQueue
        sessionMonitor = context.eventMonitor
        environment = context.environment
        shouldAutomaticallyResume = context.shouldAutomaticallyResume
        defaultQueue = context.defaultQueue
        defaults = context.defaults
        // Made in place: a local copy cost a copy and a destruction of the whole state.
        self.mutableState = Mutex(RequestMutableState(interceptor: context.interceptor))
    }

    // MARK: State

    /// Current state.
    public var state: State { mutableState.withLock { $0.machine.state } }
    /// `state == .initialized`.
    public var isInitialized: Bool { state == .initialized }
    /// `state == .resumed`.
    public var isResumed: Bool { state == .resumed }
    /// `state == .suspended`.
    public var isSuspended: Bool { state == .suspended }
    /// `state == .cancelled`.
    public var isCancelled: Bool { state == .cancelled }
    /// `state == .finished`.
    public var isFinished: Bool { state == .finished }

    /// Whether the Session performs the request: its first attempt's setup has started, or
    /// `resume()` has asked for it. A lazy request is not performed before its first `resume()`,
    /// one cancelled before that never is. Alamofire's Session tracks a request from then on.
    var isPerformed: Bool {
        mutableState.withLock { $0.machine.hasAttempt || $0.machine.state == .resumed }
    }

    /// The monitor of this request: the Session's monitors, then those added with `eventMonitor(_:)`.
    public var eventMonitor: (any EventMonitor)? {
        let added = mutableState.withLock { $0.addedMonitors }
        guard let sessionMonitor else { return nil }
        return added.isEmpty ? sessionMonitor : sessionMonitor.appending(added)
    }

    /// The request-level interceptor (constructor argument plus `interceptor(_:)`, `adapt(using:)`
    /// and `retry(using:)`).
    public var interceptor: (any RequestInterceptor)? { mutableState.withLock { $0.interceptor } }

    /// Installed upload progress callback.
    public internal(set) var uploadProgressHandler: (handler: ProgressHandler, queue: DispatchQueue)? {
        get { mutableState.withLock { $0.uploadProgressHandler } }
        set { mutableState.withLock { $0.uploadProgressHandler = newValue } }
    }

    /// Installed download progress callback.
    public internal(set) var downloadProgressHandler: (handler: ProgressHandler, queue: DispatchQueue)? {
        get { mutableState.withLock { $0.downloadProgressHandler } }
        set { mutableState.withLock { $0.downloadProgressHandler = newValue } }
    }

    /// The request-level redirect handler; it takes precedence over the Session's.
    public internal(set) var redirectHandler: (any RedirectHandler)? {
        get { mutableState.withLock { $0.redirectHandler } }
        set { mutableState.withLock { $0.redirectHandler = newValue } }
    }

    /// The request-level cache handler; it takes precedence over the Session's.
    public internal(set) var cachedResponseHandler: (any CachedResponseHandler)? {
        get { mutableState.withLock { $0.cachedResponseHandler } }
        set { mutableState.withLock { $0.cachedResponseHandler = newValue } }
    }

    /// Credential used to answer HTTP authentication challenges.
    public internal(set) var credential: URLCredential? {
        get { mutableState.withLock { $0.credential } }
        set { mutableState.withLock { $0.credential = newValue } }
    }

    /// Every URLRequest created for this request: initial, adapted, and those of retries.
    public var requests: [URLRequest] { mutableState.withLock { $0.requests.array } }
    /// First of `requests`.
    public var firstRequest: URLRequest? { requests.first }
    /// Last of `requests`.
    public var lastRequest: URLRequest? { mutableState.withLock { $0.requests.last } }
    /// Same as `lastRequest`.
    public var request: URLRequest? { lastRequest }
    /// Requests as handed to the transport, one per attempt (the last redirect hop's request), with
    /// the Session's headers merged in.
    public var performedRequests: [URLRequest] { mutableState.withLock { $0.machine.ledger.performedRequests }.map(\.urlRequest) }
    /// Response of the most recent exchange, if any.
    public var response: HTTPURLResponse? { lazyResponse?.response }
    /// The response of the most recent exchange as the pipeline carries it (see `LazyHTTPResponse`).
    var lazyResponse: LazyHTTPResponse? { mutableState.withLock { $0.machine.response } }
    /// What a validation reads, in one take of the lock and without copying the error out: the
    /// last request and the response, or nil when there is an error already or no response.
    var validationInput: (request: URLRequest?, response: LazyHTTPResponse)? {
        mutableState.withLock { state in
            guard state.machine.error == nil, let response = state.machine.response else { return nil }
            return (state.requests.last, response)
        }
    }
    /// Number of retries performed so far.
    public var retryCount: Int { mutableState.withLock { $0.machine.retryCount } }
    /// Current error (creation, adaptation, transport, validation, cancellation); reset on retry.
    public internal(set) var error: AFError? {
        get { mutableState.withLock { $0.machine.error } }
        set { mutableState.withLock { $0.machine.error = newValue } }
    }

    /// When each stage of the request happened (Lupine's stand-in for metrics).
    public var timeline: Timeline { mutableState.withLock { $0.machine.timeline } }

    /// Always empty: URLSession metrics do not exist on this transport; see `timeline`.
    public var allMetrics: [URLSessionTaskMetrics] { [] }
    /// Always nil; see `timeline`.
    public var firstMetrics: URLSessionTaskMetrics? { nil }
    /// Always nil; see `timeline`.
    public var lastMetrics: URLSessionTaskMetrics? { nil }
    /// Always nil; see `timeline`.
    public var metrics: URLSessionTaskMetrics? { nil }

    // MARK: Lifecycle

    /// Cancels the request: the state becomes `.cancelled`, `error` becomes `.explicitlyCancelled`
    /// unless already set, and the exchange in flight is cancelled (or, with none, the request
    /// finishes at once). Cancelled requests are never retried.
    @discardableResult
    public func cancel() -> Self {
        let action = mutableState.withLock { $0.machine.cancel() }
        if case .ignore = action { return self }
        notify(.didCancel, about: self as Request) { $0.requestDidCancel($1) }
        attemptTaskDidFollowRequest(.cancel)
        switch action {
        case let .cancelExchange(task):
            notify(.didCancelExchange, about: self as Request) { $0.requestDidCancelExchange($1) }
            task?.cancel()
        case .finish: underlyingQueue.async { self.finish() }
        case .notifyOnly, .ignore: break
        }
        return self
    }

    /// Suspends the request: no exchange starts while suspended, and an exchange in flight stops
    /// reading its response body (the server is slowed down by TCP backpressure) until `resume()`.
    @discardableResult
    public func suspend() -> Self {
        let action = mutableState.withLock { state in
            let action = state.machine.suspend()
            // With the state change, so that a racing resume cannot reach the demand first.
            if action != .ignore { readDemand.record(.suspended, present: true) }
            return action
        }
        guard case let .suspended(exchangeIsRunning) = action else { return self }
        readDemand.settle()
        notify(.didSuspend, about: self as Request) { $0.requestDidSuspend($1) }
        attemptTaskDidFollowRequest(.suspend)
        if exchangeIsRunning { notify(.didSuspendExchange, about: self as Request) { $0.requestDidSuspendExchange($1) } }
        return self
    }

    /// Resumes the request; the first resume of a lazily set-up request starts its setup.
    @discardableResult
    public func resume() -> Self {
        // Without its Session (deinitialized), a request waits as a lazy one does.
        let setupIsLazy = environment == nil || defaults.setsUpLazily
        let action = mutableState.withLock { state in
            let action = state.machine.resume(setupIsLazy: setupIsLazy)
            if action != .ignore { readDemand.record(.suspended, present: false) }
            return action
        }
        guard case let .resumed(then: next) = action else { return self }
        // Announced before reading resumes, as Alamofire queues `didResume` before the task's
        // `resume()`: a paused exchange let go first could finish, and a monitor would see
        // `requestDidFinish` before `requestDidResume`.
        notify(.didResume, about: self as Request) { $0.requestDidResume($1) }
        attemptTaskDidFollowRequest(.resume)
        readDemand.settle()
        switch next {
        case .startSetup:
            // The setup runs on the root queue, once, as `Session.readyToPerform(request:)` runs it.
            guard let environment else { break }
            // `self as Request`, not the dynamic `Self` of this method, and the environment as
            // the existential, not opened to its dynamic type: the runner's generic code is then
            // specialized, without a reabstraction thunk (an allocation) for the closure.
            defaults.rootQueueRunner.run(self as Request, environment as any RequestEnvironment) { request, environment in
                guard request.beginSetup() else { return }
                environment.prepareAttempt(of: request)
            }
        case let .startExchange(urlRequest):
            // On the root queue: a hop reads the Session's storage and asks its URLProtocol
            // classes and trust manager, which must not run on an event loop.
            defaults.rootQueueRunner.run(self as Request, urlRequest) { $0.startExchange($1) }
        case .resumeExchange: notify(.didResumeExchange, about: self as Request) { $0.requestDidResumeExchange($1) }
        case .nothing: break
        }
        return self
    }

    // MARK: Subclass hooks: where the body comes from, where the response goes

    /// What the URLRequest of each attempt is built from.
    var urlRequestConvertible: (any URLRequestConvertible)? { nil }

    /// Whether the Session's HTTP cache may answer and store this request's responses. Data and
    /// stream requests use it (URLSession runs both as data tasks); downloads always go to the
    /// network.
    var usesHTTPCache: Bool { false }

    /// The body of the current attempt's response, as offered to the HTTP cache; nil when there is
    /// none to offer.
    var responseBodyForCache: Data? { nil }

    /// The URL schemes this kind of request speaks; any other fails with `URLError(.unsupportedURL)`.
    var supportedURLSchemes: Set<String> { Self.httpSchemes }

    /// The schemes of a data, upload, download or stream request, built once.
    static let httpSchemes: Set<String> = ["http", "https"]

    /// Starts one exchange on the Session's transport. A WebSocket request overrides it: its
    /// upgrade runs on a connection of the engine's own that leaves the pool after the 101.
    func openExchange(_ transportRequest: TransportRequest, of hop: PreparedHop, on environment: any RequestEnvironment,
                      events: any TransportEvents) -> any TransportTask {
        environment.execute(transportRequest, of: hop, for: self, events: events)
    }

    /// The body to send for `urlRequest`.
    func transportBody(for urlRequest: URLRequest) throws -> TransportRequestBody? {
        if let body = urlRequest.httpBody { return .data(body) }
        if let stream = urlRequest.httpBodyStream { return InputStreamChunks(stream).transportBody(for: urlRequest) }
        return nil
    }

    /// A final response head arrived; a sink that needs time adds a reason to `readDemand`.
    func didReceiveResponseHead(_ response: LazyHTTPResponse, task: any TransportTask) {}

    /// A part of the response body arrived.
    func didReceiveBodyPart(_ data: Data, task: any TransportTask) {}

    /// The attempt's exchange ended: `error` is the request's error so far, nil for a complete
    /// response. Runs on `underlyingQueue` before the validators and the retry decision; a sink
    /// finishes here (a download moves its file, or keeps its partial file for resume data) and
    /// may set `error`, then calls `next` on `underlyingQueue` (a sink that touches the disk does
    /// so on `DiskIO`'s threads, and comes back).
    func transferWillComplete(error: AFError?, then next: @escaping @Sendable () -> Void) {
        next()
    }

    /// Whether `transferWillComplete(error:then:)` has work to do: true unless a subclass knows
    /// its sink has none (a DataRequest's body is in memory), which spares a closure per request.
    var hasSinkToComplete: Bool { true }

    /// Whether the body is made by `createBody()` before each attempt is sent (uploads).
    var createsBodyBeforeSending: Bool { false }

    /// Makes the attempt's body, on the Session's request queue, after the URLRequest is adapted;
    /// a returned error (already recorded and reported) fails the attempt.
    func createBody() -> AFError? { nil }

    /// Whether `createBody()` reads or writes files (a multipart form's first encoding): it then
    /// runs on `DiskIO`'s threads rather than the Session's queues.
    var createsBodyOnDisk: Bool { false }

    /// The last step, once the request has finished and its serializers ran: the owner forgets it.
    func cleanup() {
        environment?.requestDidFinish(self)
    }

    /// Runs the validators added to the request (after a complete response).
    func runValidators() {}

    /// Clears what the last attempt received.
    func resetForRetry() {}

    // MARK: Response head handlers (onHTTPResponse)

    typealias HTTPResponseHandler = @Sendable (HTTPURLResponse, @escaping @Sendable (ResponseDisposition) -> Void) -> Void

    /// Installs the `onHTTPResponse` handler of DataRequest and DataStreamRequest (last one wins).
    func setHTTPResponseHandler(queue: DispatchQueue, _ handler: @escaping HTTPResponseHandler) {
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        mutableState.withLock { $0.httpResponseHandler = (queue, handler) }
    }

    /// Hands `response` to the `onHTTPResponse` handler, if any: the body waits until it answers
    /// `.allow`, and `.cancel` cancels the request.
    func askHTTPResponseHandler(_ lazyResponse: LazyHTTPResponse, task: any TransportTask) {
        guard let handler = mutableState.withLock({ $0.httpResponseHandler }),
              let response = lazyResponse.response else { return }
        readDemand.add(.responseHandler, ifTask: task)
        handler.queue.async {
            handler.handler(response) { disposition in
                switch disposition {
                case .allow: self.readDemand.remove(.responseHandler, ifTask: task)
                case .cancel: self.cancel()
                }
            }
        }
    }

    // MARK: Events

    /// Delivers an event to the Session's monitors and to those added to this request that
    /// implement it (`kind` names the method `event` calls). An event no monitor implements costs
    /// nothing but this check.
    @inline(__always)
    /// Whether a monitor may implement `kind`: when false, `notify(kind, ...)` does nothing, and the
    /// closure for it need not be made.
    func monitorsWant(_ kind: MonitorEvent) -> Bool {
        sessionMonitor?.wants(kind) ?? false || hasAddedMonitors.load(ordering: .acquiring)
    }

    func notify(_ kind: MonitorEvent, _ event: @escaping @Sendable (any EventMonitor) -> Void) {
        let toSession = sessionMonitor?.wants(kind) ?? false
        let toAdded = hasAddedMonitors.load(ordering: .acquiring)
        guard toSession || toAdded else { return }
        if toSession { sessionMonitor?.performEvent(kind, event) }
        if toAdded { eventMonitorsAdded(kind, event) }
    }

    /// `notify(kind, event)` for an event about `payload`, with `event` capturing nothing: the
    /// Session's monitors get it without a closure when their mailboxes deliver at once; one is
    /// made for monitors added to the request. In a method returning `Self`, pass `self as Request`:
    /// the 6.3.1 compiler crashes in IRGen on a payload of dynamic `Self` in release builds.
    @inline(__always)
    func notify<Payload: Sendable>(_ kind: MonitorEvent, about payload: Payload,
                                   _ event: @escaping @Sendable (any EventMonitor, Payload) -> Void) {
        if let sessionMonitor, sessionMonitor.wants(kind) { sessionMonitor.performEvent(kind, about: payload, event) }
        if hasAddedMonitors.load(ordering: .acquiring) { eventMonitorsAdded(kind) { event($0, payload) } }
    }

    private func eventMonitorsAdded(_ kind: MonitorEvent, _ event: @escaping @Sendable (any EventMonitor) -> Void) {
        let added = mutableState.withLock { $0.addedMonitors }
        for monitor in added where MonitorEventDefaults.defaults(for: type(of: monitor)) & kind.bit == 0 {
            monitor.queue.resolvingLupineDefault(to: defaultQueue).async { event(monitor) }
        }
    }
}

extension Request {
    /// Answer to `onHTTPResponse` handlers.
    public enum ResponseDisposition: Sendable {
        /// Continue the request.
        case allow
        /// Cancel the request, exactly as `cancel()` would.
        case cancel
    }
}

extension Request: Equatable {
    /// Requests are equal when their `id`s are.
    public static func == (lhs: Request, rhs: Request) -> Bool { lhs.id == rhs.id }
}

extension Request: Hashable {
    /// Hashes `id`.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
