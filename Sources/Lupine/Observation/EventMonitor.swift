import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives the events of every request's lifecycle, on its own `queue`.
///
/// Every requirement has an empty default implementation: implement only what you need.
///
/// For one attempt of a `DataRequest` the events come in this order (Alamofire's, with Lupine's
/// transport events where Alamofire reports URLSession delegate events):
///
/// 1. `requestDidResume(_:)` when `resume()` is accepted (the first one also starts the setup);
/// 2. `request(_:didCreateInitialURLRequest:)`, then `request(_:didAdaptInitialRequest:to:)` when
///    an adapter ran, then `request(_:didCreateURLRequest:)`;
/// 3. `request(_:didCreateTask:)`, then `request(_:didResumeTask:)` when the request is resumed;
/// 4. `requestDidResumeExchange(_:)`, `request(_:didSendURLRequest:)` (per redirect hop),
///    `request(_:didReceiveResponse:)`;
/// 5. `request(_:didValidateRequest:response:data:withResult:)` for each validator that ran;
/// 6. `request(_:didCompleteAttemptWithError:timeline:)`, then `request(_:didCompleteTask:with:)`;
/// 7. `requestIsRetrying(_:)` and steps 2-6 again, or `requestDidFinish(_:)`;
/// 8. `request(_:didParseResponse:)` once per response handler.
///
/// The task of the `URLSessionTask`-typed events is the attempt's facade task (the request's
/// `task` while the attempt runs): Lupine runs no URLSession. A monitor that implements none of
/// these events costs no facade. `request(_:didGatherMetrics:)` and the URLSession delegate events
/// (`urlSession(...)`) are not part of the protocol: a conformance that implements them still
/// compiles, and `Timeline` takes the place of metrics.
public protocol EventMonitor: Sendable {
    /// Queue on which this monitor's events are delivered. The default is `.main` on Apple
    /// platforms and, on Linux, a serial queue owned by the Session (see README, "Queues").
    var queue: DispatchQueue { get }

    /// The first URLRequest was built (before adaptation).
    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest)
    /// Building the URLRequest failed.
    func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError)
    /// An adapter produced a new URLRequest.
    func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest)
    /// Adaptation failed.
    func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError)
    /// The final URLRequest of this attempt.
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest)
    /// The URLSessionTask of an attempt was created (a facade: see `Request.task`), after
    /// `request(_:didCreateURLRequest:)`.
    func request(_ request: Request, didCreateTask task: URLSessionTask)
    /// The attempt failed before its exchange ended: the server was not trusted. The task still
    /// completes (`request(_:didCompleteTask:with:)` follows); `error` is the request's error.
    func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError)
    /// The attempt's exchange ended, after its validators ran, once per attempt. `error` is the
    /// task's own error (the transport's, or `URLError(.cancelled)` for a cancelled task), nil
    /// when a complete response arrived.
    func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?)
    /// The request is about to be retried.
    func requestIsRetrying(_ request: Request)
    /// The request finished; its response serializers are about to run.
    func requestDidFinish(_ request: Request)
    /// `resume()` was accepted.
    func requestDidResume(_ request: Request)
    /// The attempt's task was resumed: when it was created for a resumed request, or by `resume()`.
    func request(_ request: Request, didResumeTask task: URLSessionTask)
    /// `suspend()` was accepted.
    func requestDidSuspend(_ request: Request)
    /// The attempt's task was suspended: when it was created for a suspended request, or by `suspend()`.
    func request(_ request: Request, didSuspendTask task: URLSessionTask)
    /// `cancel()` was accepted.
    func requestDidCancel(_ request: Request)
    /// The attempt's task was cancelled by `cancel()` before it completed.
    func request(_ request: Request, didCancelTask task: URLSessionTask)
    /// A DataRequest validator ran.
    func request(_ request: DataRequest,
                 didValidateRequest urlRequest: URLRequest?,
                 response: HTTPURLResponse,
                 data: Data?,
                 withResult result: Request.ValidationResult)
    /// An unserialized DataResponse was produced.
    func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>)
    /// A serialized DataResponse was produced.
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>)
    /// A DataStreamRequest validator ran.
    func request(_ request: DataStreamRequest,
                 didValidateRequest urlRequest: URLRequest?,
                 response: HTTPURLResponse,
                 withResult result: Request.ValidationResult)
    /// A chunk of a DataStreamRequest's body was serialized (by a DataStreamSerializer or as a String).
    func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>)
    /// An UploadRequest's body for this attempt was created.
    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable)
    /// An UploadRequest's body could not be created; the attempt fails with `error`.
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError)
    /// An UploadRequest's stream body was handed to the transport, which reads it in chunks.
    func request(_ request: UploadRequest, didProvideInputStream stream: InputStream)
    /// A DownloadRequest's file was moved to its destination (`.success`), or could not be
    /// (`.failure(.downloadedFileMoveFailed(...))`), before its task completes.
    func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>)
    /// A DownloadRequest's destination was computed; the file is moved there next.
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL)
    /// A DownloadRequest validator ran.
    func request(_ request: DownloadRequest,
                 didValidateRequest urlRequest: URLRequest?,
                 response: HTTPURLResponse,
                 fileURL: URL?,
                 withResult result: Request.ValidationResult)
    /// An unserialized DownloadResponse was produced.
    func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>)
    /// A serialized DownloadResponse was produced.
    func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>)

    /// Lupine: an attempt's exchange started on the transport, or a suspended exchange was
    /// resumed (its body is read again). Unlike `request(_:didResumeTask:)`, it is not called for a
    /// task that has not started its exchange yet.
    func requestDidResumeExchange(_ request: Request)
    /// Lupine: a running exchange was suspended (it stops reading the response body).
    func requestDidSuspendExchange(_ request: Request)
    /// Lupine: a running exchange was cancelled.
    func requestDidCancelExchange(_ request: Request)
    /// Lupine: one HTTP exchange of the request went out on the transport (once per attempt and
    /// per redirect hop), as actually sent.
    func request(_ request: Request, didSendURLRequest urlRequest: URLRequest)
    /// Lupine: the response head of an exchange arrived (the first byte of the response).
    func request(_ request: Request, didReceiveResponse response: HTTPURLResponse)
    /// Lupine: an attempt's exchange ended (all of its redirect hops), once per attempt, after
    /// its validators ran, just before `request(_:didCompleteTask:with:)`; with `timeline` it
    /// takes the place of `request(_:didGatherMetrics:)`. `error` is the request's error so far
    /// (transport, cancellation, an untrusted server), nil when a complete response arrived, even
    /// one a validator then rejected; `timeline` holds the attempt's times.
    func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline)
}

extension EventMonitor {
    /// The default delivery queue: `.main` on Apple platforms, the Session's own serial queue on Linux.
    public var queue: DispatchQueue { .lupineDefault }

    // Each default tells Lupine that the monitor does not implement the event, so that the event
    // costs nothing for it from then on: no closure, no dispatch, no facade task (see
    // `MonitorEventDefaults`).

    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        MonitorEventDefaults.record(.didCreateInitialURLRequest, for: type(of: self))
    }
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        MonitorEventDefaults.record(.didFailToCreateURLRequest, for: type(of: self))
    }
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        MonitorEventDefaults.record(.didAdaptInitialRequest, for: type(of: self))
    }
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        MonitorEventDefaults.record(.didFailToAdaptURLRequest, for: type(of: self))
    }
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        MonitorEventDefaults.record(.didCreateURLRequest, for: type(of: self))
    }
    public func request(_ request: Request, didCreateTask task: URLSessionTask) {
        MonitorEventDefaults.record(.didCreateTask, for: type(of: self))
    }
    public func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        MonitorEventDefaults.record(.didFailTaskEarly, for: type(of: self))
    }
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        MonitorEventDefaults.record(.didCompleteTask, for: type(of: self))
    }
    public func requestIsRetrying(_ request: Request) {
        MonitorEventDefaults.record(.isRetrying, for: type(of: self))
    }
    public func requestDidFinish(_ request: Request) {
        MonitorEventDefaults.record(.didFinish, for: type(of: self))
    }
    public func requestDidResume(_ request: Request) {
        MonitorEventDefaults.record(.didResume, for: type(of: self))
    }
    public func request(_ request: Request, didResumeTask task: URLSessionTask) {
        MonitorEventDefaults.record(.didResumeTask, for: type(of: self))
    }
    public func requestDidSuspend(_ request: Request) {
        MonitorEventDefaults.record(.didSuspend, for: type(of: self))
    }
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        MonitorEventDefaults.record(.didSuspendTask, for: type(of: self))
    }
    public func requestDidCancel(_ request: Request) {
        MonitorEventDefaults.record(.didCancel, for: type(of: self))
    }
    public func request(_ request: Request, didCancelTask task: URLSessionTask) {
        MonitorEventDefaults.record(.didCancelTask, for: type(of: self))
    }
    public func request(_ request: DataRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        data: Data?,
                        withResult result: Request.ValidationResult) {
        MonitorEventDefaults.record(.didValidateData, for: type(of: self))
    }
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        MonitorEventDefaults.record(.didParseDataResponse, for: type(of: self))
    }
    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        MonitorEventDefaults.record(.didParseSerializedDataResponse, for: type(of: self))
    }
    public func request(_ request: DataStreamRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        withResult result: Request.ValidationResult) {
        MonitorEventDefaults.record(.didValidateStream, for: type(of: self))
    }
    public func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
        MonitorEventDefaults.record(.didParseStream, for: type(of: self))
    }
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        MonitorEventDefaults.record(.didCreateUploadable, for: type(of: self))
    }
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        MonitorEventDefaults.record(.didFailToCreateUploadable, for: type(of: self))
    }
    public func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        MonitorEventDefaults.record(.didProvideInputStream, for: type(of: self))
    }
    public func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>) {
        MonitorEventDefaults.record(.didFinishDownloading, for: type(of: self))
    }
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        MonitorEventDefaults.record(.didCreateDestinationURL, for: type(of: self))
    }
    public func request(_ request: DownloadRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        fileURL: URL?,
                        withResult result: Request.ValidationResult) {
        MonitorEventDefaults.record(.didValidateDownload, for: type(of: self))
    }
    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        MonitorEventDefaults.record(.didParseDownloadResponse, for: type(of: self))
    }
    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>) {
        MonitorEventDefaults.record(.didParseSerializedDownloadResponse, for: type(of: self))
    }
    public func requestDidResumeExchange(_ request: Request) {
        MonitorEventDefaults.record(.didResumeExchange, for: type(of: self))
    }
    public func requestDidSuspendExchange(_ request: Request) {
        MonitorEventDefaults.record(.didSuspendExchange, for: type(of: self))
    }
    public func requestDidCancelExchange(_ request: Request) {
        MonitorEventDefaults.record(.didCancelExchange, for: type(of: self))
    }
    public func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) {
        MonitorEventDefaults.record(.didSendURLRequest, for: type(of: self))
    }
    public func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) {
        MonitorEventDefaults.record(.didReceiveResponse, for: type(of: self))
    }
    public func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        MonitorEventDefaults.record(.didCompleteAttempt, for: type(of: self))
    }
}
