import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// Creates and runs requests: the entry point of Lupine, as in Alamofire.
///
/// A Session owns its transport (Lupine's `ConnectionEngine`) and its queues. Requests hold it weakly:
/// releasing a Session finishes its unfinished requests with `AFError.sessionDeinitialized` and
/// shuts its transport down. `Session.default` (`AF`) lives for the whole process.
open class Session: @unchecked Sendable {
    /// The shared instance used by `AF`.
    public static let `default` = Session()

    /// When a new Request does its setup work (URLRequest creation and adaptation).
    public enum RequestSetup {
        /// Nothing happens until `resume()` is called on the Request. The default.
        case lazy
        /// Setup starts as soon as the request is created; the exchange still waits for `resume()`.
        case eager
    }

    /// Serial queue for the Session's internal work.
    public let rootQueue: DispatchQueue
    /// Whether requests resume automatically when their first response handler is added.
    public let startRequestsImmediately: Bool
    /// When requests do their setup work.
    public let requestSetup: RequestSetup
    /// Queue where URLRequests are built.
    public let requestQueue: DispatchQueue
    /// Queue where response serializers run.
    public let serializationQueue: DispatchQueue
    /// Session-wide interceptor; runs before any per-request interceptor.
    public let interceptor: (any RequestInterceptor)?
    /// Per-host server trust evaluation, run during the TLS handshake of each https or wss connection.
    public let serverTrustManager: ServerTrustManager?
    /// Session-wide redirect policy; a request-level handler takes precedence.
    public let redirectHandler: (any RedirectHandler)?
    /// Session-wide cache policy; a request-level handler takes precedence.
    public let cachedResponseHandler: (any CachedResponseHandler)?
    /// The monitors passed at init, fanned out from `rootQueue`.
    public let eventMonitor: CompositeEventMonitor

    /// The configuration the Session was made with (headers, timeouts, connection limits).
    let configuration: URLSessionConfiguration
    /// Moves the bytes of each exchange.
    let transport: any Transport
    /// The transport given, when it is Lupine's engine: WebSocket upgrades run on its pool (the
    /// metrics wrapper around `transport` aside).
    let engine: ConnectionEngine?
    /// The URLProtocol classes of the configuration that may answer requests in place of the
    /// transport (Foundation's own left out), read once as URLSession reads its configuration.
    let urlProtocolClasses: [URLProtocol.Type]
    /// The cache of the configuration's `urlCache`, nil when it has none: read once, as URLSession
    /// reads its configuration (a request then pays not the store's registry lookup).
    let httpCache: HTTPCache?
    /// The configuration's `httpAdditionalHeaders`, read once, in each form a hop needs them.
    let additionalHeaders: SessionHeaderFields
    /// What every hop reads of `configuration`, read once.
    let hopSettings: SessionHopSettings
    /// Traces requests; nil when no tracer was active at creation (see `TracingEventMonitor`).
    let tracing: TracingEventMonitor?
    /// Records metrics; nil when no metrics backend was active at creation (see `MetricsEventMonitor`).
    let metrics: MetricsEventMonitor?
    /// Where handlers and monitors given the default queue run on Linux (serial, owned here).
    let callbackQueue: DispatchQueue
    /// True when `requestQueue` is the Session's own, which targets the root queue: URLRequests are
    /// then made on the root queue directly, saving a hand-off per request with the same ordering.
    let setsUpOnRootQueue: Bool
    /// Runs the Session's root-queue work with as few thread hand-offs as the queue contract allows.
    let rootQueueRunner: RootQueueRunner
    /// What every request of this Session is made with: its queues and fallbacks, made once
    /// (whether serializers may run on the root queue directly is decided there).
    let requestDefaults: RequestDefaults
    /// Where the Session reads the time and waits for delays (a retry's `retryWithDelay`): the
    /// engine's kind of clock, so that one clock a test moves forward drives the engine's
    /// deadlines and the Session's delays, and nothing sleeps.
    var clock: any EngineClock {
        get { clockBox.withLockedValue { $0 } }
        set { clockBox.withLockedValue { $0 = newValue } }
    }
    private let clockBox = NIOLockedValueBox<any EngineClock>(SystemEngineClock())
    /// Requests made and not yet finished (read by setup and cleanup).
    let activeRequests = NIOLockedValueBox<Set<Request>>([])
    /// Whether the Session still takes requests (see `shutdown(gracePeriod:)`).
    let shutdownState = SessionShutdown()

    /// Creates a Session.
    ///
    /// - Parameters:
    ///   - configuration: Headers, timeouts (`timeoutIntervalForRequest` is the idle timeout,
    ///     `timeoutIntervalForResource` the total one), `httpMaximumConnectionsPerHost`, proxies
    ///     (`connectionProxyDictionary`, else `http_proxy`/`https_proxy`/`no_proxy`).
    ///   - rootQueue: Serial queue for internal work; when it is not `.main`, a serial queue targeting it is used.
    ///   - startRequestsImmediately: Whether adding a response handler resumes the request.
    ///   - requestSetup: `.lazy` (setup on first resume) or `.eager` (setup at creation).
    ///   - requestQueue: Queue for URLRequest creation; targets `rootQueue` when nil.
    ///   - serializationQueue: Queue for response serialization; targets `rootQueue` when nil.
    ///   - interceptor: Session-wide adapter and retrier.
    ///   - serverTrustManager: Chooses the evaluator that decides, during each TLS handshake,
    ///     whether the server is trusted (see `ServerTrustManager`); nil for system validation.
    ///   - redirectHandler: Session-wide redirect policy (default: follow, with URLSession's rules).
    ///   - cachedResponseHandler: Session-wide decision on what is stored in the configuration's
    ///     `urlCache` (default: every response RFC 9111 lets a private cache store).
    ///   - eventMonitors: Monitors of every request.
    public convenience init(configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
                            rootQueue: DispatchQueue = DispatchQueue(label: "lupine.session.rootQueue"),
                            startRequestsImmediately: Bool = true,
                            requestSetup: RequestSetup = .lazy,
                            requestQueue: DispatchQueue? = nil,
                            serializationQueue: DispatchQueue? = nil,
                            interceptor: (any RequestInterceptor)? = nil,
                            serverTrustManager: ServerTrustManager? = nil,
                            redirectHandler: (any RedirectHandler)? = nil,
                            cachedResponseHandler: (any CachedResponseHandler)? = nil,
                            eventMonitors: [any EventMonitor] = [AlamofireNotifications()]) {
        self.init(transport: ConnectionEngine(configuration: .init(sessionConfiguration: configuration)),
                  configuration: configuration,
                  rootQueue: rootQueue,
                  startRequestsImmediately: startRequestsImmediately,
                  requestSetup: requestSetup,
                  requestQueue: requestQueue,
                  serializationQueue: serializationQueue,
                  interceptor: interceptor,
                  serverTrustManager: serverTrustManager,
                  redirectHandler: redirectHandler,
                  cachedResponseHandler: cachedResponseHandler,
                  eventMonitors: eventMonitors)
    }

    /// Creates a Session on a given transport: a test double of your own, for example.
    ///
    /// The other parameters are those of `init(configuration:...)`.
    public init(transport: any Transport,
                configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
                rootQueue: DispatchQueue = DispatchQueue(label: "lupine.session.rootQueue"),
                startRequestsImmediately: Bool = true,
                requestSetup: RequestSetup = .lazy,
                requestQueue: DispatchQueue? = nil,
                serializationQueue: DispatchQueue? = nil,
                interceptor: (any RequestInterceptor)? = nil,
                serverTrustManager: ServerTrustManager? = nil,
                redirectHandler: (any RedirectHandler)? = nil,
                cachedResponseHandler: (any CachedResponseHandler)? = nil,
                eventMonitors: [any EventMonitor] = [AlamofireNotifications()]) {
        let serialRootQueue = RootQueueRunner.isMainQueue(rootQueue)
            ? rootQueue
            : DispatchQueue(label: rootQueue.label, target: rootQueue)
        let instruments = SessionInstruments(eventMonitors: eventMonitors)
        tracing = instruments.tracing
        metrics = instruments.metrics
        self.transport = instruments.metrics.map { MeteredTransport(base: transport, metrics: $0) } ?? transport
        engine = transport as? ConnectionEngine
        if let metrics = instruments.metrics, let engine {
            // The gauge follows the engine's connections while the monitor lives.
            engine.observeConnectionCounts { [weak metrics] counts in
                metrics?.recordConnectionCounts(open: counts.open, opened: counts.opened, closed: counts.closed)
            }
        }
        self.configuration = configuration
        self.urlProtocolClasses = URLProtocolRegistry.userClasses(in: configuration)
        httpCache = configuration.urlCache.map { HTTPCache(urlCache: $0) }
        additionalHeaders = SessionHeaderFields(configuration.httpAdditionalHeaders)
        hopSettings = SessionHopSettings(configuration)
        self.rootQueue = serialRootQueue
        self.startRequestsImmediately = startRequestsImmediately
        self.requestSetup = requestSetup
        self.requestQueue = requestQueue ?? DispatchQueue(label: "\(serialRootQueue.label).requestQueue", target: serialRootQueue)
        setsUpOnRootQueue = requestQueue == nil
        self.serializationQueue = serializationQueue ?? DispatchQueue(label: "\(serialRootQueue.label).serializationQueue", target: serialRootQueue)
        self.interceptor = interceptor
        self.serverTrustManager = serverTrustManager
        self.redirectHandler = redirectHandler
        self.cachedResponseHandler = cachedResponseHandler
        let callbackQueue = DispatchQueue(label: "lupine.session.callbackQueue")
        self.callbackQueue = callbackQueue
        // Monitors that keep the default queue receive events on a queue of their own that targets
        // the root queue: an event sent from the root queue then costs no thread wake-up.
        let monitorQueue = DispatchQueue(label: "\(serialRootQueue.label).eventMonitorQueue", target: serialRootQueue)
        let runner = RootQueueRunner(queue: serialRootQueue)
        rootQueueRunner = runner
        requestDefaults = RequestDefaults(rootQueueRunner: runner, serializesOnRootQueue: serializationQueue == nil,
                                          setsUpLazily: requestSetup == .lazy, startsImmediately: startRequestsImmediately,
                                          redirectHandler: redirectHandler, cachedResponseHandler: cachedResponseHandler,
                                          httpCache: httpCache, engine: engine, callbackQueue: callbackQueue)
        self.eventMonitor = CompositeEventMonitor(monitors: eventMonitors + instruments.added, queue: serialRootQueue,
                                                  defaultMemberQueue: monitorQueue, rootQueueRunner: runner)
    }

    deinit {
        let unfinished = activeRequests.withLockedValue { requests in
            defer { requests.removeAll() }
            return requests
        }
        for request in unfinished {
            request.underlyingQueue.async { request.finish(error: .sessionDeinitialized) }
        }
        // The transport is kept alive by this closure until its shutdown completes.
        let transport = transport
        transport.shutdown { _ = transport }
    }

    /// Runs `action` on `rootQueue` with the requests currently in flight.
    ///
    /// As in Alamofire, a request counts once the Session performs it: at creation with
    /// `requestSetup: .eager`, else at its first `resume()`. A lazy request never resumed is left out
    /// (so `cancelAllRequests` leaves it to run later).
    public func withAllRequests(perform action: @escaping @Sendable (Set<Request>) -> Void) {
        rootQueue.async {
            action(self.activeRequests.withLockedValue { $0 }.filter(\.isPerformed))
        }
    }

    /// Cancels every request in flight, then calls `completion` on `queue`.
    public func cancelAllRequests(completingOnQueue queue: DispatchQueue = .lupineDefault, completion: (@Sendable () -> Void)? = nil) {
        let queue = queue.resolvingLupineDefault(to: callbackQueue)
        withAllRequests { requests in
            requests.forEach { $0.cancel() }
            queue.async { completion?() }
        }
    }

    /// Mutates the URLRequest built from URL, method and headers; runs before parameter encoding.
    public typealias RequestModifier = @Sendable (inout URLRequest) throws -> Void

    // The `open` request overloads below are most of this file, which passes the ~500 lines a file
    // should hold: they stay in the class body because Alamofire declares them `open` and Swift
    // lets a subclass override only what the class body declares (an extension's methods are
    // final). Each only packs its arguments and calls the make...Request factory of its kind
    // (Session+DataRequests.swift, Session+Downloads.swift, Session+Uploads.swift and the rest).

    // MARK: Data requests (class body, so that subclasses can override them)

    /// Creates a DataRequest from a URL, method, parameters encoded with `encoding`, and headers.
    ///
    /// The URLRequest is built as `URLRequest(url:method:headers:)`, then `requestModifier` runs,
    /// then `encoding.encode(_:with:)`. An invalid URL fails the request with
    /// `AFError.invalidURL(url:)`; nothing is sent.
    open func request(_ convertible: any URLConvertible,
                      method: HTTPMethod = .get,
                      parameters: Parameters? = nil,
                      encoding: any ParameterEncoding = URLEncoding.default,
                      headers: HTTPHeaders? = nil,
                      interceptor: (any RequestInterceptor)? = nil,
                      shouldAutomaticallyResume: Bool? = nil,
                      requestModifier: RequestModifier? = nil) -> DataRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: DictionaryParameters(parameters: parameters, encoding: encoding))
        return request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a DataRequest from a URL, method, an `Encodable` value encoded with `encoder`, and
    /// headers. `encoder` is not called when `parameters` is nil.
    open func request<Parameters: Encodable & Sendable>(_ convertible: any URLConvertible,
                                                        method: HTTPMethod = .get,
                                                        parameters: Parameters? = nil,
                                                        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
                                                        headers: HTTPHeaders? = nil,
                                                        interceptor: (any RequestInterceptor)? = nil,
                                                        shouldAutomaticallyResume: Bool? = nil,
                                                        requestModifier: RequestModifier? = nil) -> DataRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: EncodableParameters(value: parameters, encoder: encoder))
        return request(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a DataRequest from a fully formed URLRequestConvertible (a router).
    open func request(_ convertible: any URLRequestConvertible,
                      interceptor: (any RequestInterceptor)? = nil,
                      shouldAutomaticallyResume: Bool? = nil) -> DataRequest {
        makeDataRequest(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    // MARK: Downloads (class body, so that subclasses can override them)

    /// Creates a DownloadRequest from a URL, method, parameters encoded with `encoding`, and headers.
    ///
    /// The URLRequest is built as for `request(_:method:parameters:encoding:headers:interceptor:requestModifier:)`.
    /// The body streams to a temporary file, which is moved per `destination` once complete.
    ///
    /// `destination` says where the file goes; nil places it beside the temporary file, named
    /// `Alamofire_<temporary file name>`.
    open func download(_ convertible: any URLConvertible,
                       method: HTTPMethod = .get,
                       parameters: Parameters? = nil,
                       encoding: any ParameterEncoding = URLEncoding.default,
                       headers: HTTPHeaders? = nil,
                       interceptor: (any RequestInterceptor)? = nil,
                       shouldAutomaticallyResume: Bool? = nil,
                       requestModifier: RequestModifier? = nil,
                       to destination: DownloadRequest.Destination? = nil) -> DownloadRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: DictionaryParameters(parameters: parameters, encoding: encoding))
        return download(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a DownloadRequest from a URL, method, an `Encodable` value encoded with `encoder`, and
    /// headers. `encoder` is not called when `parameters` is nil.
    ///
    /// `destination` says where the file goes; nil places it beside the temporary file.
    open func download<Parameters: Encodable & Sendable>(_ convertible: any URLConvertible,
                                                         method: HTTPMethod = .get,
                                                         parameters: Parameters? = nil,
                                                         encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
                                                         headers: HTTPHeaders? = nil,
                                                         interceptor: (any RequestInterceptor)? = nil,
                                                         shouldAutomaticallyResume: Bool? = nil,
                                                         requestModifier: RequestModifier? = nil,
                                                         to destination: DownloadRequest.Destination? = nil) -> DownloadRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: EncodableParameters(value: parameters, encoder: encoder))
        return download(convertible, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a DownloadRequest from a fully formed URLRequestConvertible (a router).
    ///
    /// `destination` says where the file goes; nil places it beside the temporary file.
    open func download(_ convertible: any URLRequestConvertible,
                       interceptor: (any RequestInterceptor)? = nil,
                       shouldAutomaticallyResume: Bool? = nil,
                       to destination: DownloadRequest.Destination? = nil) -> DownloadRequest {
        makeDownloadRequest(.request(convertible), interceptor: interceptor,
                            shouldAutomaticallyResume: shouldAutomaticallyResume, destination: destination)
    }

    /// Continues a download from the resume data of a cancelled or failed one.
    ///
    /// The request is a GET of the resume data's URL with the original request's headers, plus
    /// `Range: bytes=<bytes on disk>-` and `If-Range` with the response's `ETag` (else its
    /// `Last-Modified`). A `206` continuing the partial file is appended to it; a `200` (the server
    /// ignores ranges, or the resource changed) restarts the file from zero. Either way the file is
    /// the one a fresh download gives. When the partial file is gone, the download starts from zero.
    /// Resume data that cannot be decoded fails the request with
    /// `AFError.sessionTaskFailed(error: URLError(.cannotDecodeRawData))`.
    ///
    /// Lupine's resume data is an XML property list: a dictionary with `version` (1), `url`,
    /// `headers`, `entityTag` and `lastModified` (the validators, when present), `bytesOnDisk`,
    /// `expectedLength` (-1 when unknown) and `temporaryFile` (the partial file, which stays in the
    /// temporary directory until the download is resumed).
    ///
    /// - Parameters:
    ///   - data:        The `resumeData` of a `DownloadRequest` or `DownloadResponse`, or `AFError.downloadResumeData`.
    ///   - interceptor: Adapter and retrier for this request, after the Session's.
    ///   - shouldAutomaticallyResume: Whether adding a response handler resumes the request; nil
    ///     defers to `startRequestsImmediately`.
    ///   - destination: Where the file goes; nil places it beside the temporary file.
    open func download(resumingWith data: Data,
                       interceptor: (any RequestInterceptor)? = nil,
                       shouldAutomaticallyResume: Bool? = nil,
                       to destination: DownloadRequest.Destination? = nil) -> DownloadRequest {
        makeDownloadRequest(.resumeData(data), interceptor: interceptor,
                            shouldAutomaticallyResume: shouldAutomaticallyResume, destination: destination)
    }
    // MARK: Uploads (class body, so that subclasses can override them)

    /// Uploads `data` to a URL; the default method is POST.
    ///
    /// - Parameters:
    ///   - data: The body, sent with its length as `Content-Length`.
    ///   - convertible: The URL.
    ///   - method: `.post` unless given.
    ///   - headers: Header fields added to the session's.
    ///   - interceptor: Adapts and retries this request after the Session's interceptor.
    ///   - shouldAutomaticallyResume: Overrides `startRequestsImmediately` for this request.
    ///   - fileManager: Removes temporary upload files.
    ///   - requestModifier: Changes the URLRequest after it is built.
    open func upload(_ data: Data,
                     to convertible: any URLConvertible,
                     method: HTTPMethod = .post,
                     headers: HTTPHeaders? = nil,
                     interceptor: (any RequestInterceptor)? = nil,
                     shouldAutomaticallyResume: Bool? = nil,
                     fileManager: FileManager = .default,
                     requestModifier: RequestModifier? = nil) -> UploadRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: NoParameters())
        return upload(data, with: convertible, interceptor: interceptor,
                      shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Uploads `data` with a fully formed URLRequestConvertible (a router).
    open func upload(_ data: Data,
                     with convertible: any URLRequestConvertible,
                     interceptor: (any RequestInterceptor)? = nil,
                     shouldAutomaticallyResume: Bool? = nil,
                     fileManager: FileManager = .default) -> UploadRequest {
        makeUploadRequest(.data(data), with: convertible, interceptor: interceptor,
                          shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Uploads the content of a file, streamed from disk in chunks; the file is never deleted.
    ///
    /// A missing file fails the request with `AFError.sessionTaskFailed(error: URLError(.fileDoesNotExist))`,
    /// a directory with `URLError(.fileIsDirectory)`.
    open func upload(_ fileURL: URL,
                     to convertible: any URLConvertible,
                     method: HTTPMethod = .post,
                     headers: HTTPHeaders? = nil,
                     interceptor: (any RequestInterceptor)? = nil,
                     shouldAutomaticallyResume: Bool? = nil,
                     fileManager: FileManager = .default,
                     requestModifier: RequestModifier? = nil) -> UploadRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: NoParameters())
        return upload(fileURL, with: convertible, interceptor: interceptor,
                      shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Uploads the content of a file with a fully formed URLRequestConvertible (a router).
    open func upload(_ fileURL: URL,
                     with convertible: any URLRequestConvertible,
                     interceptor: (any RequestInterceptor)? = nil,
                     shouldAutomaticallyResume: Bool? = nil,
                     fileManager: FileManager = .default) -> UploadRequest {
        makeUploadRequest(.file(fileURL, shouldRemove: false), with: convertible, interceptor: interceptor,
                          shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Uploads what `stream` gives, read in chunks as the connection accepts them and sent chunked
    /// (its length is unknown). A read error fails the request with
    /// `AFError.sessionTaskFailed(error: URLError(.cannotOpenFile))`.
    open func upload(_ stream: InputStream,
                     to convertible: any URLConvertible,
                     method: HTTPMethod = .post,
                     headers: HTTPHeaders? = nil,
                     interceptor: (any RequestInterceptor)? = nil,
                     fileManager: FileManager = .default,
                     requestModifier: RequestModifier? = nil) -> UploadRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: NoParameters())
        return upload(stream, with: convertible, interceptor: interceptor, fileManager: fileManager)
    }

    /// Uploads what `stream` gives with a fully formed URLRequestConvertible (a router).
    open func upload(_ stream: InputStream,
                     with convertible: any URLRequestConvertible,
                     interceptor: (any RequestInterceptor)? = nil,
                     shouldAutomaticallyResume: Bool? = nil,
                     fileManager: FileManager = .default) -> UploadRequest {
        makeUploadRequest(.stream(stream), with: convertible, interceptor: interceptor,
                          shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Uploads a multipart form built by `multipartFormData`, which is called before this method
    /// returns.
    ///
    /// The request gets `Content-Type: multipart/form-data; boundary=…`. A form whose
    /// `contentLength` is below `encodingMemoryThreshold` is encoded in memory; a larger one is
    /// written to `<temporary directory>/org.alamofire.manager/multipart.form.data/<UUID>` and
    /// streamed from there, and that file is removed when the request is cleaned up (also after a
    /// failure or a cancellation). The form is encoded once: a retry sends the same body. Encoding
    /// errors fail the request with `AFError.multipartEncodingFailed(reason:)`.
    open func upload(multipartFormData: @escaping (MultipartFormData) -> Void,
                     to url: any URLConvertible,
                     usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
                     method: HTTPMethod = .post,
                     headers: HTTPHeaders? = nil,
                     interceptor: (any RequestInterceptor)? = nil,
                     fileManager: FileManager = .default,
                     requestModifier: RequestModifier? = nil) -> UploadRequest {
        let form = MultipartFormData(fileManager: fileManager)
        multipartFormData(form)
        return upload(multipartFormData: form, to: url, usingThreshold: encodingMemoryThreshold, method: method,
                      headers: headers, interceptor: interceptor, fileManager: fileManager, requestModifier: requestModifier)
    }

    /// Uploads a multipart form built by `multipartFormData` with a fully formed URLRequestConvertible.
    open func upload(multipartFormData: @escaping (MultipartFormData) -> Void,
                     with request: any URLRequestConvertible,
                     usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
                     interceptor: (any RequestInterceptor)? = nil,
                     fileManager: FileManager = .default) -> UploadRequest {
        let form = MultipartFormData(fileManager: fileManager)
        multipartFormData(form)
        return upload(multipartFormData: form, with: request, usingThreshold: encodingMemoryThreshold,
                      interceptor: interceptor, fileManager: fileManager)
    }

    /// Uploads a multipart form already built.
    open func upload(multipartFormData: MultipartFormData,
                     to url: any URLConvertible,
                     usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
                     method: HTTPMethod = .post,
                     headers: HTTPHeaders? = nil,
                     interceptor: (any RequestInterceptor)? = nil,
                     shouldAutomaticallyResume: Bool? = nil,
                     fileManager: FileManager = .default,
                     requestModifier: RequestModifier? = nil) -> UploadRequest {
        let convertible = SessionRequestConvertible(url: url, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: NoParameters())
        return makeMultipartUploadRequest(multipartFormData, with: convertible, threshold: encodingMemoryThreshold,
                                          interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
                                          fileManager: fileManager)
    }

    /// Uploads a multipart form already built, with a fully formed URLRequestConvertible.
    open func upload(multipartFormData: MultipartFormData,
                     with request: any URLRequestConvertible,
                     usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
                     interceptor: (any RequestInterceptor)? = nil,
                     shouldAutomaticallyResume: Bool? = nil,
                     fileManager: FileManager = .default) -> UploadRequest {
        makeMultipartUploadRequest(multipartFormData, with: request, threshold: encodingMemoryThreshold,
                                   interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
                                   fileManager: fileManager)
    }

    // MARK: Streaming requests (class body, so that subclasses can override them)

    /// Creates a DataStreamRequest from a URL, method, an `Encodable` value encoded with
    /// `encoder`, and headers. `encoder` is not called when `parameters` is nil.
    ///
    /// With `automaticallyCancelOnStreamError`, a `DataStreamSerializer` failure cancels the
    /// request; `requestModifier` mutates the URLRequest built from URL, method and headers,
    /// before encoding.
    open func streamRequest<Parameters: Encodable & Sendable>(_ convertible: any URLConvertible,
                                                              method: HTTPMethod = .get,
                                                              parameters: Parameters? = nil,
                                                              encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
                                                              headers: HTTPHeaders? = nil,
                                                              automaticallyCancelOnStreamError: Bool = false,
                                                              interceptor: (any RequestInterceptor)? = nil,
                                                              shouldAutomaticallyResume: Bool? = nil,
                                                              requestModifier: RequestModifier? = nil) -> DataStreamRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: EncodableParameters(value: parameters, encoder: encoder))
        return streamRequest(convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
                             interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a DataStreamRequest from a URL, method and headers, without parameters.
    ///
    /// With `automaticallyCancelOnStreamError`, a `DataStreamSerializer` failure cancels the
    /// request; `requestModifier` mutates the URLRequest built from URL, method and headers.
    open func streamRequest(_ convertible: any URLConvertible,
                            method: HTTPMethod = .get,
                            headers: HTTPHeaders? = nil,
                            automaticallyCancelOnStreamError: Bool = false,
                            interceptor: (any RequestInterceptor)? = nil,
                            shouldAutomaticallyResume: Bool? = nil,
                            requestModifier: RequestModifier? = nil) -> DataStreamRequest {
        let convertible = SessionRequestConvertible(url: convertible, method: method, headers: headers, requestModifier: requestModifier,
                                                    parameters: NoParameters())
        return streamRequest(convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
                             interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a DataStreamRequest from a fully formed URLRequestConvertible (a router).
    ///
    /// With `automaticallyCancelOnStreamError`, a `DataStreamSerializer` failure cancels the request.
    open func streamRequest(_ convertible: any URLRequestConvertible,
                            automaticallyCancelOnStreamError: Bool = false,
                            interceptor: (any RequestInterceptor)? = nil,
                            shouldAutomaticallyResume: Bool? = nil) -> DataStreamRequest {
        makeDataStreamRequest(convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
                              interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)
    }
    // MARK: WebSocket requests (class body, so that subclasses can override them)

    /// Creates a WebSocketRequest to a `ws` or `wss` URL (`http` and `https` work too).
    ///
    /// The opening request is a GET built as `URLRequest(url:method:headers:)`, then
    /// `requestModifier` runs; it goes through the Session's and `interceptor`'s adapters (an
    /// adapter can add a token) and retriers like any request.
    ///
    /// `configuration` sets the subprotocol, the message size limit and the automatic ping
    /// interval; `shouldAutomaticallyResume` says whether adding a stream handler resumes the
    /// request (nil defers to `startRequestsImmediately`).
    open func webSocketRequest(to url: any URLConvertible,
                               configuration: WebSocketRequest.Configuration = .default,
                               headers: HTTPHeaders? = nil,
                               interceptor: (any RequestInterceptor)? = nil,
                               shouldAutomaticallyResume: Bool? = nil,
                               requestModifier: RequestModifier? = nil) -> WebSocketRequest {
        webSocketRequest(to: url, configuration: configuration, parameters: Empty?.none,
                         encoder: URLEncodedFormParameterEncoder.default, headers: headers, interceptor: interceptor,
                         shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier)
    }

    /// Creates a WebSocketRequest whose URL carries `parameters`, encoded with `encoder` (into the
    /// query, for the default encoder). `encoder` is not called when `parameters` is nil.
    open func webSocketRequest<Parameters>(to url: any URLConvertible,
                                           configuration: WebSocketRequest.Configuration = .default,
                                           parameters: Parameters? = nil,
                                           encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
                                           headers: HTTPHeaders? = nil,
                                           interceptor: (any RequestInterceptor)? = nil,
                                           shouldAutomaticallyResume: Bool? = nil,
                                           requestModifier: RequestModifier? = nil) -> WebSocketRequest
        where Parameters: Encodable & Sendable {
        let convertible = SessionRequestConvertible(url: url, method: .get, headers: headers, requestModifier: requestModifier,
                                                    parameters: EncodableParameters(value: parameters, encoder: encoder))
        return webSocketRequest(performing: convertible, configuration: configuration, interceptor: interceptor,
                                shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a WebSocketRequest from a fully formed URLRequestConvertible (a router).
    open func webSocketRequest(performing convertible: any URLRequestConvertible,
                               configuration: WebSocketRequest.Configuration = .default,
                               interceptor: (any RequestInterceptor)? = nil,
                               shouldAutomaticallyResume: Bool? = nil) -> WebSocketRequest {
        makeWebSocketRequest(convertible, configuration: configuration, interceptor: interceptor,
                             shouldAutomaticallyResume: shouldAutomaticallyResume)
    }
}
