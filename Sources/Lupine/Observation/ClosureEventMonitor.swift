import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `EventMonitor` that calls a closure per event, on `queue`.
///
/// Set the closures before the monitor is handed to a `Session` or a request: they are read on
/// `queue` as events arrive, without a lock (as in Alamofire). An event whose closure is nil is
/// ignored. The generic `request(_:didParseResponse:)` has no closure.
///
/// ```swift
/// let monitor = ClosureEventMonitor()
/// monitor.requestDidFinish = { request in print("finished", request.id) }
/// let session = Session(eventMonitors: [monitor])
/// ```
///
/// The `URLSessionTask`-typed closures (`requestDidCreateTask`, `requestDidResumeTask`...) receive
/// the attempt's facade task. The closures for Alamofire's URLSession delegate events
/// (`sessionDidBecomeInvalidWithError`, `taskDidComplete`, `dataTaskDidReceiveData` and the rest
/// of the URLSession-typed ones) and for metrics (`requestDidGatherMetrics`) are there so that
/// code written for Alamofire that sets them compiles, but Lupine never calls them: it runs no
/// URLSession, and no `URLSessionTaskMetrics` exist. Read the request-level events instead (a
/// response's `Timeline` takes the place of metrics). The `requestDid...Exchange` closures and
/// `requestDidCompleteAttemptWithError` add what Lupine's transport reports.
open class ClosureEventMonitor: EventMonitor, @unchecked Sendable {
    // MARK: URLSession events, never called

    /// Never called: Lupine has no URLSession to become invalid.
    open var sessionDidBecomeInvalidWithError: ((URLSession, (any Error)?) -> Void)?
    /// Never called: authentication challenges are answered by `authenticate(...)` and the
    /// credential storage.
    open var taskDidReceiveChallenge: ((URLSession, URLSessionTask, URLAuthenticationChallenge) -> Void)?
    /// Never called: read a request's `uploadProgress` instead.
    open var taskDidSendBodyData: ((URLSession, URLSessionTask, Int64, Int64, Int64) -> Void)?
    /// Never called: upload streams are read by Lupine's transport.
    open var taskNeedNewBodyStream: ((URLSession, URLSessionTask) -> Void)?
    /// Never called: redirects reach the request's `RedirectHandler`.
    open var taskWillPerformHTTPRedirection: ((URLSession, URLSessionTask, HTTPURLResponse, URLRequest) -> Void)?
    /// Never called: no `URLSessionTaskMetrics` exist; see `requestDidCompleteAttemptWithError`'s
    /// `Timeline`.
    open var taskDidFinishCollectingMetrics: ((URLSession, URLSessionTask, URLSessionTaskMetrics) -> Void)?
    /// Never called: see `requestDidCompleteTaskWithError`.
    open var taskDidComplete: ((URLSession, URLSessionTask, (any Error)?) -> Void)?
    /// Never called: Lupine does not wait for connectivity.
    open var taskIsWaitingForConnectivity: ((URLSession, URLSessionTask) -> Void)?
    /// Never called: see `requestDidReceiveResponse`.
    open var dataTaskDidReceiveResponse: ((URLSession, URLSessionDataTask, URLResponse) -> Void)?
    /// Never called: read the body with a `DataStreamRequest` or the request's `downloadProgress`.
    open var dataTaskDidReceiveData: ((URLSession, URLSessionDataTask, Data) -> Void)?
    /// Never called: the request's `CachedResponseHandler` sees what is cached.
    open var dataTaskWillCacheResponse: ((URLSession, URLSessionDataTask, CachedURLResponse) -> Void)?
    /// Never called: see `requestDidFinishDownloadingUsingTaskWithResult`.
    open var downloadTaskDidFinishDownloadingToURL: ((URLSession, URLSessionDownloadTask, URL) -> Void)?
    /// Never called: read a download's `downloadProgress` instead.
    open var downloadTaskDidWriteData: ((URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void)?
    /// Never called: a resumed download starts from its resume data's offset.
    open var downloadTaskDidResumeAtOffset: ((URLSession, URLSessionDownloadTask, Int64, Int64) -> Void)?

    // MARK: Request events

    /// `request(_:didCreateInitialURLRequest:)`.
    open var requestDidCreateInitialURLRequest: ((Request, URLRequest) -> Void)?
    /// `request(_:didFailToCreateURLRequestWithError:)`.
    open var requestDidFailToCreateURLRequestWithError: ((Request, AFError) -> Void)?
    /// `request(_:didAdaptInitialRequest:to:)`.
    open var requestDidAdaptInitialRequestToAdaptedRequest: ((Request, URLRequest, URLRequest) -> Void)?
    /// `request(_:didFailToAdaptURLRequest:withError:)`.
    open var requestDidFailToAdaptURLRequestWithError: ((Request, URLRequest, AFError) -> Void)?
    /// `request(_:didCreateURLRequest:)`.
    open var requestDidCreateURLRequest: ((Request, URLRequest) -> Void)?
    /// `request(_:didCreateTask:)`.
    open var requestDidCreateTask: ((Request, URLSessionTask) -> Void)?
    /// Never called: no `URLSessionTaskMetrics` exist; see `requestDidCompleteAttemptWithError`'s
    /// `Timeline`.
    open var requestDidGatherMetrics: ((Request, URLSessionTaskMetrics) -> Void)?
    /// `request(_:didFailTask:earlyWithError:)`.
    open var requestDidFailTaskEarlyWithError: ((Request, URLSessionTask, AFError) -> Void)?
    /// `request(_:didCompleteTask:with:)`.
    open var requestDidCompleteTaskWithError: ((Request, URLSessionTask, AFError?) -> Void)?
    /// `requestIsRetrying(_:)`.
    open var requestIsRetrying: ((Request) -> Void)?
    /// `requestDidFinish(_:)`.
    open var requestDidFinish: ((Request) -> Void)?
    /// `requestDidResume(_:)`.
    open var requestDidResume: ((Request) -> Void)?
    /// `request(_:didResumeTask:)`.
    open var requestDidResumeTask: ((Request, URLSessionTask) -> Void)?
    /// `requestDidSuspend(_:)`.
    open var requestDidSuspend: ((Request) -> Void)?
    /// `request(_:didSuspendTask:)`.
    open var requestDidSuspendTask: ((Request, URLSessionTask) -> Void)?
    /// `requestDidCancel(_:)`.
    open var requestDidCancel: ((Request) -> Void)?
    /// `request(_:didCancelTask:)`.
    open var requestDidCancelTask: ((Request, URLSessionTask) -> Void)?
    /// `request(_:didValidateRequest:response:data:withResult:)`.
    open var requestDidValidateRequestResponseDataWithResult: ((DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)?
    /// `request(_:didParseResponse:)` with the unserialized `DataResponse<Data?, AFError>`.
    open var requestDidParseResponse: ((DataRequest, DataResponse<Data?, AFError>) -> Void)?
    /// `request(_:didValidateRequest:response:withResult:)` of a DataStreamRequest.
    open var requestDidValidateRequestResponseWithResult: ((DataStreamRequest, URLRequest?, HTTPURLResponse, Request.ValidationResult) -> Void)?
    /// `request(_:didCreateUploadable:)`.
    open var requestDidCreateUploadable: ((UploadRequest, UploadRequest.Uploadable) -> Void)?
    /// `request(_:didFailToCreateUploadableWithError:)`.
    open var requestDidFailToCreateUploadableWithError: ((UploadRequest, AFError) -> Void)?
    /// `request(_:didProvideInputStream:)`.
    open var requestDidProvideInputStream: ((UploadRequest, InputStream) -> Void)?
    /// `request(_:didFinishDownloadingUsing:with:)`.
    open var requestDidFinishDownloadingUsingTaskWithResult: ((DownloadRequest, URLSessionTask, Result<URL, AFError>) -> Void)?
    /// `request(_:didCreateDestinationURL:)`.
    open var requestDidCreateDestinationURL: ((DownloadRequest, URL) -> Void)?
    /// `request(_:didValidateRequest:response:fileURL:withResult:)`.
    open var requestDidValidateRequestResponseFileURLWithResult: ((DownloadRequest, URLRequest?, HTTPURLResponse, URL?, Request.ValidationResult) -> Void)?
    /// `request(_:didParseResponse:)` with the unserialized `DownloadResponse<URL?, AFError>`.
    open var requestDidParseDownloadResponse: ((DownloadRequest, DownloadResponse<URL?, AFError>) -> Void)?

    /// Lupine: `requestDidResumeExchange(_:)`.
    open var requestDidResumeExchange: ((Request) -> Void)?
    /// Lupine: `requestDidSuspendExchange(_:)`.
    open var requestDidSuspendExchange: ((Request) -> Void)?
    /// Lupine: `requestDidCancelExchange(_:)`.
    open var requestDidCancelExchange: ((Request) -> Void)?
    /// Lupine: `request(_:didSendURLRequest:)`.
    open var requestDidSendURLRequest: ((Request, URLRequest) -> Void)?
    /// Lupine: `request(_:didReceiveResponse:)`.
    open var requestDidReceiveResponse: ((Request, HTTPURLResponse) -> Void)?
    /// Lupine: `request(_:didCompleteAttemptWithError:timeline:)`.
    open var requestDidCompleteAttemptWithError: ((Request, AFError?, Timeline) -> Void)?

    /// Queue on which the closures are called.
    public let queue: DispatchQueue

    /// Creates a monitor whose closures are called on `queue`.
    ///
    /// - Parameter queue: Where the closures run. The default is `.main` on Apple platforms and, on
    ///   Linux, the serial queue of the Session (or of the request's Session, for a monitor added
    ///   with `Request.eventMonitor(_:)`), since the main queue is often never drained there.
    ///   Passing `.main` explicitly gives `.main`.
    public init(queue: DispatchQueue = .lupineDefault) {
        self.queue = queue
    }

    open func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        requestDidCreateInitialURLRequest?(request, urlRequest)
    }

    open func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        requestDidFailToCreateURLRequestWithError?(request, error)
    }

    open func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest)
    }

    open func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        requestDidFailToAdaptURLRequestWithError?(request, initialRequest, error)
    }

    open func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        requestDidCreateURLRequest?(request, urlRequest)
    }

    open func request(_ request: Request, didCreateTask task: URLSessionTask) {
        requestDidCreateTask?(request, task)
    }

    open func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        requestDidFailTaskEarlyWithError?(request, task, error)
    }

    open func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        requestDidCompleteTaskWithError?(request, task, error)
    }

    open func requestIsRetrying(_ request: Request) {
        requestIsRetrying?(request)
    }

    open func requestDidFinish(_ request: Request) {
        requestDidFinish?(request)
    }

    open func requestDidResume(_ request: Request) {
        requestDidResume?(request)
    }

    public func request(_ request: Request, didResumeTask task: URLSessionTask) {
        requestDidResumeTask?(request, task)
    }

    open func requestDidSuspend(_ request: Request) {
        requestDidSuspend?(request)
    }

    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        requestDidSuspendTask?(request, task)
    }

    open func requestDidCancel(_ request: Request) {
        requestDidCancel?(request)
    }

    public func request(_ request: Request, didCancelTask task: URLSessionTask) {
        requestDidCancelTask?(request, task)
    }

    open func request(_ request: DataRequest,
                      didValidateRequest urlRequest: URLRequest?,
                      response: HTTPURLResponse,
                      data: Data?,
                      withResult result: Request.ValidationResult) {
        requestDidValidateRequestResponseDataWithResult?(request, urlRequest, response, data, result)
    }

    open func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        requestDidParseResponse?(request, response)
    }

    public func request(_ request: DataStreamRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        withResult result: Request.ValidationResult) {
        requestDidValidateRequestResponseWithResult?(request, urlRequest, response, result)
    }

    open func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        requestDidCreateUploadable?(request, uploadable)
    }

    open func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        requestDidFailToCreateUploadableWithError?(request, error)
    }

    open func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        requestDidProvideInputStream?(request, stream)
    }

    open func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>) {
        requestDidFinishDownloadingUsingTaskWithResult?(request, task, result)
    }

    open func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        requestDidCreateDestinationURL?(request, url)
    }

    open func request(_ request: DownloadRequest,
                      didValidateRequest urlRequest: URLRequest?,
                      response: HTTPURLResponse,
                      fileURL: URL?,
                      withResult result: Request.ValidationResult) {
        requestDidValidateRequestResponseFileURLWithResult?(request, urlRequest, response, fileURL, result)
    }

    open func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        requestDidParseDownloadResponse?(request, response)
    }

    open func requestDidResumeExchange(_ request: Request) {
        requestDidResumeExchange?(request)
    }

    open func requestDidSuspendExchange(_ request: Request) {
        requestDidSuspendExchange?(request)
    }

    open func requestDidCancelExchange(_ request: Request) {
        requestDidCancelExchange?(request)
    }

    open func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) {
        requestDidSendURLRequest?(request, urlRequest)
    }

    open func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) {
        requestDidReceiveResponse?(request, response)
    }

    open func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        requestDidCompleteAttemptWithError?(request, error, timeline)
    }

    /// Whether the closure of a task event is set: the facade task is made only for those that are.
    /// Read without a lock, as the closures are (they are set before the monitor is in use).
    func hasClosure(for event: TaskEvent) -> Bool {
        switch event {
        case .create: requestDidCreateTask != nil
        case .resume: requestDidResumeTask != nil
        case .suspend: requestDidSuspendTask != nil
        case .cancel: requestDidCancelTask != nil
        case .complete: requestDidCompleteTaskWithError != nil
        case .failEarly: requestDidFailTaskEarlyWithError != nil
        case .finishDownloading: requestDidFinishDownloadingUsingTaskWithResult != nil
        }
    }
}
