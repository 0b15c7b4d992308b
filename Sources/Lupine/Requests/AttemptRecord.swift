import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything about one attempt of a request, in one place: from the start of its setup to the
/// end of its exchange (all of its hops), then kept for the public API (`tasks`,
/// `performedRequests`, the task facades).
///
/// The state machine changes the exchange's facts (deadline, times, response, redirects,
/// challenges); the pipeline records the request each hop sends; the task part is set once the
/// attempt's URLRequest is final.
struct AttemptRecord {
    /// Its place in the ledger: 0 for the first attempt, then one more per retry.
    let number: Int
    /// When the attempt must end (`timeoutIntervalForResource`), shared by its hops.
    var deadline: Date?
    var redirectCount = 0
    var sentTime: Date?
    var firstByteTime: Date?
    var completedTime: Date?
    /// The final response of the current hop, if it has arrived, with its head as received
    /// (fields in order, names repeated, the version).
    var response: LazyHTTPResponse?
    /// Whether a server's 401 challenge was answered: once per attempt.
    var answeredChallenge = false
    /// Whether a proxy's 407 was answered: once per attempt.
    var answeredProxyChallenge = false
    /// Whether the hop in force went to the network (not to a URLProtocol class or the cache).
    var hopUsesNetwork = true
    /// The request the attempt's current hop sent: a redirect or a challenge answer replaces it.
    /// It is the attempt's entry of `performedRequests` and its task's `currentRequest`; nil
    /// until a hop is sent.
    var currentRequest: OutgoingRequest?
    /// The attempt's URLSessionTask, once its URLRequest is final (an attempt whose setup failed
    /// has none, nor has one cancelled before that).
    var task: AttemptTask?

    init(number: Int) {
        self.number = number
    }

    /// Runs `body` on the record in place (through optional chaining or an array's element).
    mutating func update<Result>(_ body: (inout AttemptRecord) -> Result) -> Result {
        body(&self)
    }

    /// Whether the attempt has a task that has not completed: set by `AttemptLedger.beginTask`,
    /// cleared by `AttemptLedger.endLiveTask`, which sets the task's outcome. Stored: read
    /// through the optional `task`, each check copied the task (its request and facade retained
    /// and released), and a GET checks it half a dozen times, on either side of the wake-up.
    var hasLiveTask = false

    /// What the attempt's task facade reports now; nil when the attempt has no task.
    /// `requestState` is the request's, `upload` and `download` its counts (a live task reports
    /// them; a completed one its own, frozen).
    func taskView(requestState: Request.State,
                  upload: (total: Int64, completed: Int64),
                  download: (total: Int64, completed: Int64)) -> AttemptTaskView? {
        guard let task else { return nil }
        let currentRequest = currentRequest?.urlRequest ?? task.originalRequest
        let response = response?.response ?? task.hopResponse
        if let outcome = task.outcome {
            return AttemptTaskView(state: .completed, currentRequest: currentRequest, response: response,
                                   error: outcome.error, bytesSent: outcome.bytesSent,
                                   bytesExpectedToSend: outcome.bytesExpectedToSend, bytesReceived: outcome.bytesReceived,
                                   bytesExpectedToReceive: outcome.bytesExpectedToReceive)
        }
        let state: URLSessionTask.State = switch requestState {
        case _ where task.isCancelled: .canceling
        case .cancelled: .canceling
        case .resumed: .running
        case .initialized, .suspended: .suspended
        case .finished: .completed
        }
        return AttemptTaskView(state: state, currentRequest: currentRequest, response: response, error: nil,
                               bytesSent: upload.completed, bytesExpectedToSend: upload.total,
                               bytesReceived: download.completed, bytesExpectedToReceive: download.total)
    }
}

/// The URLSessionTask side of an attempt: what its facade reports beyond the attempt's own
/// facts, and the facade once made.
///
/// The facade object (a `URLSessionTask` subclass, whose corelibs initializer makes two dispatch
/// queues, a lock and a `Progress`) is made only when something asks for it: `request.task`, an
/// `onURLSessionTaskCreation` handler, a monitor that implements a task event, a redirect or
/// cache handler, a URLProtocol. Until then a task is these few values.
struct AttemptTask {
    /// The facade's `taskIdentifier`, unique in the process.
    let identifier: Int
    /// The attempt's URLRequest, as created and adapted.
    let originalRequest: URLRequest
    /// The response of a redirect hop shown to a redirect handler; the final response is the
    /// attempt's `response`.
    var hopResponse: HTTPURLResponse?
    /// Whether the request was cancelled while the attempt ran (the task is `.canceling`).
    var isCancelled = false
    /// Set when the attempt's exchange ended: the task's own values from then on.
    var outcome: AttemptTaskOutcome?
    /// The facade, once made.
    var facade: URLSessionTask?

    var isCompleted: Bool { outcome != nil }
}

/// A completed task's own values, frozen when its attempt's exchange ended. The attempt's
/// request and response stay in its record: nothing changes them once the exchange is over.
struct AttemptTaskOutcome {
    /// The task's own error (the transport's, or cancellation), nil for a complete response.
    var error: AFError?
    var bytesSent: Int64
    var bytesExpectedToSend: Int64
    var bytesReceived: Int64
    var bytesExpectedToReceive: Int64
}
