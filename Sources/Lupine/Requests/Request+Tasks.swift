import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

// The URLSessionTask surface of a request: one facade task per attempt that made its URLRequest
// (see `AttemptTask`, in the attempt's record of the ledger, and `DataTaskFacade`), the `task`
// properties, `onURLSessionTaskCreation`, and the task-typed monitor events, in Alamofire's order.
// The pipeline reports its milestones through the hooks at the end.
extension Request {
    // MARK: Public API

    /// Every task of the request, one per attempt (the first request and each retry), oldest first.
    ///
    /// Lupine runs no URLSession: each is a facade, a `URLSessionDataTask`, `URLSessionUploadTask`
    /// or `URLSessionDownloadTask` that reports its attempt (`state`, `originalRequest`,
    /// `currentRequest`, `response`, `error`, `taskIdentifier`, byte counts) and whose
    /// `resume()`, `suspend()` and `cancel()` act on the request while the attempt runs.
    public var tasks: [URLSessionTask] {
        mutableState.withLock { $0.machine.ledger.taskNumbers }.compactMap(attemptTaskFacade)
    }

    /// The task of the first attempt.
    public var firstTask: URLSessionTask? {
        mutableState.withLock { $0.machine.ledger.firstTaskNumber }.flatMap(attemptTaskFacade)
    }

    /// The task of the last attempt.
    public var lastTask: URLSessionTask? {
        mutableState.withLock { $0.machine.ledger.lastTaskNumber }.flatMap(attemptTaskFacade)
    }

    /// Same as `lastTask`.
    public var task: URLSessionTask? { lastTask }

    /// Calls `handler` on `queue` with the last task, if there is one, and with the task of every
    /// later attempt when it is created. The last handler set wins.
    ///
    /// - Parameters:
    ///   - queue: Where `handler` runs. The Session's callback queue by default on Linux.
    ///   - handler: Receives each task (see `tasks`).
    @preconcurrency
    @discardableResult
    public func onURLSessionTaskCreation(on queue: DispatchQueue = .lupineDefault,
                                         perform handler: @escaping @Sendable (URLSessionTask) -> Void) -> Self {
        let queue = queue.resolvingLupineDefault(to: defaultQueue)
        let last = mutableState.withLock { state -> Int? in
            state.taskCreationHandler = (queue, handler)
            return state.machine.ledger.lastTaskNumber
        }
        if let last, let task = attemptTaskFacade(last) { queue.async { handler(task) } }
        return self
    }

    // MARK: Facades

    /// The facade of attempt `number`, made on first use.
    func attemptTaskFacade(_ number: Int) -> URLSessionTask? {
        let kind = TaskFacadeKind(of: self)
        return mutableState.withLock { state -> URLSessionTask? in
            state.machine.taskFacade(number) { task in
                let handle = AttemptTaskHandle(owner: self, number: number, identifier: task.identifier,
                                               originalRequest: task.originalRequest)
                return switch kind {
                case .data: DataTaskFacade(handle: handle)
                case .upload: UploadTaskFacade(handle: handle)
                case .download: DownloadTaskFacade(handle: handle)
                }
            }
        }
    }

    /// The facade of the running attempt, if any.
    var liveAttemptTaskFacade: URLSessionTask? {
        mutableState.withLock { $0.machine.ledger.liveTaskNumber }.flatMap(attemptTaskFacade)
    }

    /// The number of the running attempt, if any.
    var liveAttemptNumber: Int? {
        mutableState.withLock { $0.machine.ledger.liveTaskNumber }
    }

    func attemptIsLive(_ number: Int) -> Bool {
        mutableState.withLock { $0.machine.ledger.liveTaskNumber == number }
    }

    /// What the facade of attempt `number` reports now.
    func attemptTaskView(_ number: Int) -> AttemptTaskView {
        let upload = uploadCounts.counts, download = downloadCounts.counts
        return mutableState.withLock { state in
            let requestState = state.machine.state
            return state.machine.ledger.withRecord(number) { record in
                record.taskView(requestState: requestState, upload: upload, download: download)
            } ?? nil
        } ?? .released
    }

    // MARK: Task events

    /// Delivers a task event about attempt `number` to the monitors that want it; its facade is
    /// made only if one does.
    func notifyTask(_ payload: TaskEventPayload, attempt number: Int) {
        sessionMonitor?.performTaskEvent(payload, for: self, task: { self.attemptTaskFacade(number) })
        guard hasAddedMonitors.load(ordering: .acquiring) else { return }
        let added = mutableState.withLock { $0.addedMonitors }
        guard !added.isEmpty else { return }
        let event = payload.event
        for monitor in added {
            let queue = monitor.queue.resolvingLupineDefault(to: defaultQueue)
            if let notifications = monitor as? AlamofireNotifications {
                if event.hasNotification { queue.async { notifications.post(event, for: self) } }
            } else if MonitorEventDefaults.defaults(for: type(of: monitor)) & event.monitorEvent.bit == 0,
                      let task = attemptTaskFacade(number) {
                queue.async { payload.deliver(to: monitor, about: self, task: task) }
            }
        }
    }

    // MARK: Pipeline hooks

    /// The URLRequest of an attempt is final: its task is created, and resumed or suspended along
    /// with the request (Alamofire's `didCreateTask`). A cancelled request gets no task.
    func attemptTaskDidBegin(with urlRequest: URLRequest) {
        let identifier = Self.nextTaskIdentifier()
        let begun = mutableState.withLock { state -> (number: Int, state: State, handler: TaskCreationHandler?)? in
            guard let number = state.machine.taskBegins(identifier: identifier, originalRequest: urlRequest) else { return nil }
            return (number, state.machine.state, state.taskCreationHandler)
        }
        guard let begun else { return }
        let number = begun.number
        if let handler = begun.handler, let task = attemptTaskFacade(number) {
            handler.queue.async { handler.handler(task) }
        }
        notifyTask(.create, attempt: number)
        switch begun.state {
        case .resumed: notifyTask(.resume, attempt: number)
        case .suspended: notifyTask(.suspend, attempt: number)
        case .initialized, .cancelled, .finished: break
        }
    }

    /// `resume()`, `suspend()` or `cancel()` was accepted: the running attempt's task follows.
    func attemptTaskDidFollowRequest(_ event: TaskEvent) {
        let number = mutableState.withLock { state -> Int? in
            event == .cancel ? state.machine.taskFollowsCancel() : state.machine.ledger.liveTaskNumber
        }
        guard let number else { return }
        switch event {
        case .resume: notifyTask(.resume, attempt: number)
        case .suspend: notifyTask(.suspend, attempt: number)
        case .cancel: notifyTask(.cancel, attempt: number)
        case .create, .complete, .failEarly, .finishDownloading: break
        }
    }

    /// The running attempt failed before its exchange ended (the server was not trusted): the
    /// request's error is `error`, and the task completes next.
    func attemptTaskDidFailEarly(with error: AFError) {
        let number = mutableState.withLock { state -> Int? in
            state.machine.error = error
            return state.machine.ledger.liveTaskNumber
        }
        guard let number else { return }
        notifyTask(.failEarly(error), attempt: number)
    }

    /// The running attempt's exchange ended with the task's own `error`: the facade's values are
    /// frozen. Returns the attempt's number, for `attemptTaskDidReportCompletion`.
    @discardableResult
    func attemptTaskDidEnd(with error: AFError?) -> Int? {
        let outcome = attemptTaskOutcome(error: error)
        return mutableState.withLock { $0.machine.taskEnds(outcome) }
    }

    /// The running task's own values as its exchange ends with `error`.
    func attemptTaskOutcome(error: AFError?) -> AttemptTaskOutcome {
        let upload = uploadCounts.counts, download = downloadCounts.counts
        return AttemptTaskOutcome(error: error, bytesSent: upload.completed, bytesExpectedToSend: upload.total,
                                  bytesReceived: download.completed, bytesExpectedToReceive: download.total)
    }

    /// Reports that attempt `number` completed (after its validators, as Alamofire does).
    func attemptTaskDidReportCompletion(_ number: Int, error: AFError?) {
        notifyTask(.complete(error), attempt: number)
    }

    /// The request finishes while an attempt's task never ran its exchange (cancelled, or its
    /// Session went away while it waited for `resume()`): that task completes, cancelled.
    func attemptTaskDidEndWithoutExchange() {
        // Most requests end with their attempt's task ended already: no error to make then.
        guard liveAttemptNumber != nil else { return }
        let cancelled = AFError.sessionTaskFailed(error: URLError(.cancelled, userInfo: [
            NSLocalizedDescriptionKey: TransportErrorMapping.description(of: .cancelled),
        ]))
        guard let number = attemptTaskDidEnd(with: cancelled) else { return }
        attemptTaskDidReportCompletion(number, error: cancelled)
    }

    /// A redirect hop answered `response`: the running attempt's facade, showing it, for the
    /// redirect handler.
    func attemptTaskFacade(showing response: HTTPURLResponse) -> URLSessionTask? {
        mutableState.withLock { $0.machine.taskShows(hopResponse: response) }.flatMap(attemptTaskFacade)
    }

    private static let taskIdentifiers = Synchronization.Atomic<Int>(0)

    /// Unique in the process, as a URLSession's task identifiers are in the session.
    private static func nextTaskIdentifier() -> Int {
        taskIdentifiers.add(1, ordering: .relaxed).newValue
    }
}

extension Request {
    /// An `onURLSessionTaskCreation` handler and its queue.
    typealias TaskCreationHandler = (queue: DispatchQueue, handler: @Sendable (URLSessionTask) -> Void)
}

extension DownloadRequest {
    /// The download's file was moved to its destination, or could not be: the running attempt's
    /// task reports it (Alamofire's `didFinishDownloading`).
    func attemptTaskDidFinishDownloading(with result: Result<URL, AFError>) {
        // The exchange has just ended: the attempt is the last one.
        guard let number = mutableState.withLock({ $0.machine.ledger.lastTaskNumber }) else { return }
        notifyTask(.finishDownloading(result), attempt: number)
    }
}

@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
extension Request {
    /// The task of every attempt (the current one first, if any); ends when the request finishes.
    /// Installs the `onURLSessionTaskCreation` handler.
    public func urlSessionTasks(bufferingPolicy: StreamOf<URLSessionTask>.BufferingPolicy = .unbounded) -> StreamOf<URLSessionTask> {
        stream(bufferingPolicy: bufferingPolicy) { [unowned self] continuation in
            onURLSessionTaskCreation(on: underlyingQueue) { continuation.yield($0) }
        }
    }
}

/// Which URLSessionTask class stands for a request's attempts, as URLSession would have made it.
enum TaskFacadeKind {
    case data, upload, download

    init(of request: Request) {
        if request is DownloadRequest {
            self = .download
        } else if request is UploadRequest {
            self = .upload
        } else {
            self = .data
        }
    }
}

extension Request {
    /// The task a `CachedResponseHandler` sees: the last attempt's (a data task: only data requests
    /// use the cache).
    func cacheHandlerTask(for urlRequest: URLRequest) -> URLSessionDataTask {
        if let task = lastTask as? URLSessionDataTask { return task }
        // Not reached: the response offered to the cache belongs to an attempt.
        return DataTaskFacade(handle: AttemptTaskHandle(owner: self, number: -1, identifier: 0, originalRequest: urlRequest))
    }
}
