import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fans every event out to its member monitors, each on the member's own queue, in order.
/// `Session.eventMonitor` is one; users cannot create one.
public final class CompositeEventMonitor: EventMonitor {
    /// The Session's root queue.
    public let queue: DispatchQueue
    /// Member monitors, in order.
    public let monitors: [any EventMonitor]
    /// Where members that keep the default queue receive their events (Linux).
    private let defaultMemberQueue: DispatchQueue
    /// One mailbox per member, on the member's queue.
    private let mailboxes: [EventMailbox]
    /// How each member takes the events (who implements what, who needs a facade task).
    private let audiences: [TaskEventAudience]

    private let rootQueueRunner: RootQueueRunner?

    /// `defaultMemberQueue` (where members that keep the default queue receive their events)
    /// targets the Session's root queue: with `rootQueueRunner`, their events are delivered at
    /// once when sent from the root queue, instead of waking a thread for them.
    init(monitors: [any EventMonitor], queue: DispatchQueue, defaultMemberQueue: DispatchQueue,
         rootQueueRunner: RootQueueRunner? = nil) {
        self.monitors = monitors
        self.queue = queue
        self.defaultMemberQueue = defaultMemberQueue
        self.rootQueueRunner = rootQueueRunner
        mailboxes = monitors.map { monitor in
            let memberQueue = monitor.queue.resolvingLupineDefault(to: defaultMemberQueue)
            return EventMailbox(queue: memberQueue, rootQueueRunner: memberQueue === defaultMemberQueue ? rootQueueRunner : nil)
        }
        audiences = monitors.map(TaskEventAudience.init)
    }

    /// A composite with `monitors` appended after this one's members.
    func appending(_ extra: [any EventMonitor]) -> CompositeEventMonitor {
        CompositeEventMonitor(monitors: monitors + extra, queue: queue, defaultMemberQueue: defaultMemberQueue,
                              rootQueueRunner: rootQueueRunner)
    }

    /// Delivers `event` (which calls the monitor method of `kind`) to the members that implement it.
    func performEvent(_ kind: MonitorEvent, _ event: @escaping @Sendable (any EventMonitor) -> Void) {
        for index in monitors.indices {
            let audience = audiences[index]
            guard audience.wants(kind) else { continue }
            mailboxes[index].post((event, monitors[index], audience)) { event, monitor, audience in
                event(monitor)
                audience.learn()
            }
        }
    }

    /// `performEvent(kind, event)` for an event about `payload`, with `event` capturing nothing: a
    /// member's mailbox that delivers at once needs no closure.
    func performEvent<Payload: Sendable>(_ kind: MonitorEvent, about payload: Payload,
                                         _ event: @escaping @Sendable (any EventMonitor, Payload) -> Void) {
        for index in monitors.indices {
            let audience = audiences[index]
            guard audience.wants(kind) else { continue }
            // Checked here rather than by `post`: the event closure in a generic payload would
            // be wrapped in a thunk, an allocation.
            if mailboxes[index].runsAtOnce() {
                ThreadContract.userCode("an event monitor")
                event(monitors[index], payload)
                audience.learn()
            } else {
                mailboxes[index].post((event, monitors[index], audience, payload)) { event, monitor, audience, payload in
                    event(monitor, payload)
                    audience.learn()
                }
            }
        }
    }

    /// Whether any member implements `event` (as far as Lupine knows: a monitor type that kept
    /// the default is seen doing so on its first event).
    func wants(_ event: MonitorEvent) -> Bool {
        audiences.contains { $0.wants(event) }
    }

    /// Whether any member wants `event` with a task.
    func wantsTaskEvent(_ event: TaskEvent) -> Bool {
        audiences.contains { $0.wants(event) }
    }

    /// Delivers a task event to the members that want it. `task` (the attempt's facade) is asked
    /// for only when one does; `AlamofireNotifications` posts its notification without it. With
    /// no member interested, the event costs no allocation.
    func performTaskEvent(_ payload: TaskEventPayload, for request: Request, task: () -> URLSessionTask?) {
        let event = payload.event
        var facade: URLSessionTask?
        for index in monitors.indices {
            let audience = audiences[index]
            if case let .notifications(notifications) = audience {
                if event.hasNotification {
                    mailboxes[index].post((notifications, event, request)) { $0.post($1, for: $2) }
                }
                continue
            }
            guard audience.wants(event) else { continue }
            guard let task = facade ?? task() else { return }
            facade = task
            mailboxes[index].post((payload, monitors[index], request, task, audience)) { payload, monitor, request, task, audience in
                payload.deliver(to: monitor, about: request, task: task)
                audience.learn()
            }
        }
    }

    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        performEvent(.didCreateInitialURLRequest) { $0.request(request, didCreateInitialURLRequest: urlRequest) }
    }

    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        performEvent(.didFailToCreateURLRequest) { $0.request(request, didFailToCreateURLRequestWithError: error) }
    }

    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        performEvent(.didAdaptInitialRequest) { $0.request(request, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        performEvent(.didFailToAdaptURLRequest) { $0.request(request, didFailToAdaptURLRequest: initialRequest, withError: error) }
    }

    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        performEvent(.didCreateURLRequest) { $0.request(request, didCreateURLRequest: urlRequest) }
    }

    public func request(_ request: Request, didCreateTask task: URLSessionTask) {
        performEvent(.didCreateTask) { $0.request(request, didCreateTask: task) }
    }

    public func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        performEvent(.didFailTaskEarly) { $0.request(request, didFailTask: task, earlyWithError: error) }
    }

    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        performEvent(.didCompleteTask) { $0.request(request, didCompleteTask: task, with: error) }
    }

    public func request(_ request: Request, didResumeTask task: URLSessionTask) {
        performEvent(.didResumeTask) { $0.request(request, didResumeTask: task) }
    }

    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        performEvent(.didSuspendTask) { $0.request(request, didSuspendTask: task) }
    }

    public func request(_ request: Request, didCancelTask task: URLSessionTask) {
        performEvent(.didCancelTask) { $0.request(request, didCancelTask: task) }
    }

    public func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>) {
        performEvent(.didFinishDownloading) { $0.request(request, didFinishDownloadingUsing: task, with: result) }
    }

    public func requestIsRetrying(_ request: Request) {
        performEvent(.isRetrying) { $0.requestIsRetrying(request) }
    }

    public func requestDidFinish(_ request: Request) {
        performEvent(.didFinish) { $0.requestDidFinish(request) }
    }

    public func requestDidResume(_ request: Request) {
        performEvent(.didResume) { $0.requestDidResume(request) }
    }

    public func requestDidSuspend(_ request: Request) {
        performEvent(.didSuspend) { $0.requestDidSuspend(request) }
    }

    public func requestDidCancel(_ request: Request) {
        performEvent(.didCancel) { $0.requestDidCancel(request) }
    }

    public func request(_ request: DataRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        data: Data?,
                        withResult result: Request.ValidationResult) {
        performEvent(.didValidateData) { $0.request(request, didValidateRequest: urlRequest, response: response, data: data, withResult: result) }
    }

    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        performEvent(.didParseDataResponse) { $0.request(request, didParseResponse: response) }
    }

    public func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        performEvent(.didParseSerializedDataResponse) { $0.request(request, didParseResponse: response) }
    }

    public func request(_ request: DataStreamRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        withResult result: Request.ValidationResult) {
        performEvent(.didValidateStream) { $0.request(request, didValidateRequest: urlRequest, response: response, withResult: result) }
    }

    public func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
        performEvent(.didParseStream) { $0.request(request, didParseStream: result) }
    }

    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        performEvent(.didCreateUploadable) { $0.request(request, didCreateUploadable: uploadable) }
    }

    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        performEvent(.didFailToCreateUploadable) { $0.request(request, didFailToCreateUploadableWithError: error) }
    }

    public func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        nonisolated(unsafe) let stream = stream
        performEvent(.didProvideInputStream) { $0.request(request, didProvideInputStream: stream) }
    }

    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        performEvent(.didCreateDestinationURL) { $0.request(request, didCreateDestinationURL: url) }
    }

    public func request(_ request: DownloadRequest,
                        didValidateRequest urlRequest: URLRequest?,
                        response: HTTPURLResponse,
                        fileURL: URL?,
                        withResult result: Request.ValidationResult) {
        performEvent(.didValidateDownload) { $0.request(request, didValidateRequest: urlRequest, response: response, fileURL: fileURL, withResult: result) }
    }

    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        performEvent(.didParseDownloadResponse) { $0.request(request, didParseResponse: response) }
    }

    public func request<Value: Sendable>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>) {
        performEvent(.didParseSerializedDownloadResponse) { $0.request(request, didParseResponse: response) }
    }

    public func requestDidResumeExchange(_ request: Request) {
        performEvent(.didResumeExchange) { $0.requestDidResumeExchange(request) }
    }

    public func requestDidSuspendExchange(_ request: Request) {
        performEvent(.didSuspendExchange) { $0.requestDidSuspendExchange(request) }
    }

    public func requestDidCancelExchange(_ request: Request) {
        performEvent(.didCancelExchange) { $0.requestDidCancelExchange(request) }
    }

    public func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) {
        performEvent(.didSendURLRequest) { $0.request(request, didSendURLRequest: urlRequest) }
    }

    public func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) {
        performEvent(.didReceiveResponse) { $0.request(request, didReceiveResponse: response) }
    }

    public func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        performEvent(.didCompleteAttempt) { $0.request(request, didCompleteAttemptWithError: error, timeline: timeline) }
    }
}
