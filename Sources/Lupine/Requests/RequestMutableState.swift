import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything about a Request that changes over its life, kept behind one lock.
struct RequestMutableState {
    var lifecycle = RequestLifecycle()
    var interceptor: (any RequestInterceptor)?
    var addedMonitors: [any EventMonitor] = []

    /// Every URLRequest built: initial, adapted, and those of retries.
    var requests: [URLRequest] = []
    /// Every URLRequest handed to the transport (one per attempt and redirect hop).
    var performedRequests: [URLRequest] = []
    /// The URLRequest that waits for `resume()` before its exchange starts.
    var pendingURLRequest: URLRequest?
    /// When the current attempt must end (`timeoutIntervalForResource`), shared by its redirect hops.
    var attemptDeadline: Date?
    var transportTask: (any TransportTask)?
    var response: HTTPURLResponse?
    /// The response header fields as received, repeated names kept (Set-Cookie lines apart).
    var responseHeaderFields: [HTTPHeader] = []
    /// The protocol version of the response's status line ("HTTP/1.1", "HTTP/2"...).
    var responseHTTPVersion = "HTTP/1.1"
    var error: AFError?
    var retryCount = 0
    var redirectCount = 0
    var credential: URLCredential?
    /// The attempts' facade tasks and the `onURLSessionTaskCreation` handler (Request+Tasks).
    var taskSurface = RequestTaskSurface()
    var redirectHandler: (any RedirectHandler)?
    var cachedResponseHandler: (any CachedResponseHandler)?
    /// The `onHTTPResponse` handler (DataRequest, DataStreamRequest): the last one set.
    var httpResponseHandler: (queue: DispatchQueue, handler: Request.HTTPResponseHandler)?
    /// The attempt (`retryCount`) in which a 401 challenge was answered: once per attempt.
    var challengeAnsweredInAttempt: Int?
    /// The attempt in which a proxy's 407 was answered: once per attempt.
    var proxyChallengeAnsweredInAttempt: Int?
    /// `Proxy-Authorization` values that answered a proxy's 407, by proxy ("host:port").
    var proxyAuthorizations: [String: String] = [:]

    var startTime: Date?
    var sentTime: Date?
    var firstByteTime: Date?
    var completedTime: Date?

    /// Serializers run one at a time, in the order added; those before index
    /// `responseSerializerCompletions.count` have run in this round.
    var responseSerializers: [@Sendable () -> Void] = []
    var responseSerializerCompletions: [@Sendable () -> Void] = []
    var isRunningSerializer = false
    var serializersFinishedOnce = false

    var uploadProgressHandler: (handler: Request.ProgressHandler, queue: DispatchQueue)?
    var downloadProgressHandler: (handler: Request.ProgressHandler, queue: DispatchQueue)?
    var cURLHandler: (queue: DispatchQueue, handler: @Sendable (String) -> Void)?
    var urlRequestHandler: (queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)?
    /// Called once when the request is finished (serializers drained); used by async streams.
    var finishHandlers: [@Sendable () -> Void] = []

    var timeline: Timeline {
        Timeline(requestStartTime: startTime, requestSentTime: sentTime, initialResponseTime: firstByteTime,
                 requestCompletedTime: completedTime, redirectCount: redirectCount, retryCount: retryCount)
    }
}
