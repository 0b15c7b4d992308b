import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything about a Request that changes over its life, kept behind one lock: the state
/// machine of its attempts, and what the caller configured or the request recorded along the way.
struct RequestMutableState {
    /// The lifecycle and the attempts' ledger (each attempt's hops, response, times, requests
    /// sent, task).
    var machine = RequestStateMachine()
    var interceptor: (any RequestInterceptor)?
    var addedMonitors: [any EventMonitor] = []
    /// The userInfo of the request's notifications, made once for all of them (see
    /// `Request.notificationUserInfo()`); it holds the request, until `didFinishNotification`.
    var notificationUserInfo: [AnyHashable: Any]?

    /// Every URLRequest built: initial, adapted, and those of retries.
    var requests = SmallList<URLRequest>()
    var credential: URLCredential?
    /// The `onURLSessionTaskCreation` handler (Request+Tasks).
    var taskCreationHandler: Request.TaskCreationHandler?
    var redirectHandler: (any RedirectHandler)?
    var cachedResponseHandler: (any CachedResponseHandler)?
    /// The `onHTTPResponse` handler (DataRequest, DataStreamRequest): the last one set.
    var httpResponseHandler: (queue: DispatchQueue, handler: Request.HTTPResponseHandler)?
    /// `Proxy-Authorization` values that answered a proxy's 407, by proxy ("host:port").
    var proxyAuthorizations: [String: String] = [:]

    /// Serializers run one at a time, in the order added; those before index
    /// `responseSerializerCompletions.count` have run in this round.
    var responseSerializers = SmallList<QueuedResponseHandler>()
    var responseSerializerCompletions = SmallList<QueuedResponseHandler>()
    var isRunningSerializer = false

    var uploadProgressHandler: (handler: Request.ProgressHandler, queue: DispatchQueue)?
    var downloadProgressHandler: (handler: Request.ProgressHandler, queue: DispatchQueue)?
    var cURLHandler: (queue: DispatchQueue, handler: @Sendable (String) -> Void)?
    var urlRequestHandler: (queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)?
    /// Called once when the request is finished (serializers drained); used by async streams.
    var finishHandlers: [@Sendable () -> Void] = []

    /// A task awaiting the response that offered to run the end of the exchange itself, and the
    /// end handed to it (see `Request.handOverCompletion(_:)`).
    var completionTaker: (any ResponseHandlerStep)?
    var handedOverCompletion: Request.TransferCompletion?
}
