import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything about a Request that changes over its life, kept behind one lock: the state
/// machine that owns its control state, and what the caller configured or the request recorded
/// along the way.
struct RequestMutableState {
    /// The lifecycle, the attempts' ledger (each attempt's hops, response, times, requests sent,
    /// task), the response handlers and the hand-over of the exchange's end.
    var machine = RequestStateMachine()
    var interceptor: (any RequestInterceptor)?
    var addedMonitors: [any EventMonitor] = []
    /// The userInfo of the request's notifications, made once for all of them (see
    /// `Request.notificationUserInfo()`); it holds the request, until `didFinishNotification`.
    var notificationUserInfo: [AnyHashable: Any]?
    /// Ends of exchanges queued on the root queue by `didCompleteTransfer`, oldest first: one at
    /// most in practice (an attempt ends once, and the next starts after its end has run).
    var queuedTransferEnds = SmallList<Request.QueuedTransferEnd>()

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

    var uploadProgressHandler: (handler: Request.ProgressHandler, queue: DispatchQueue)?
    var downloadProgressHandler: (handler: Request.ProgressHandler, queue: DispatchQueue)?
    var cURLHandler: (queue: DispatchQueue, handler: @Sendable (String) -> Void)?
    var urlRequestHandler: (queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)?
}
