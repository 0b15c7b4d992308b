import Foundation

/// What the owner of a request decided once, for every request it makes: the queues the request
/// runs on and the handlers it falls back to.
///
/// A Session makes one at its creation and hands it to each request in its `RequestContext`; the
/// request reads these as values instead of asking its Session each time, so the environment it
/// reaches its Session through (`RequestEnvironment`) carries behaviour only. A test double makes its
/// own, around a queue of its own.
final class RequestDefaults: Sendable {
    /// Runs the owner's root-queue work with as few thread hand-offs as the queue contract allows.
    let rootQueueRunner: RootQueueRunner
    /// Whether the serialization queue is the owner's own, which targets the root queue: response
    /// serializers may then run on the root queue directly.
    let serializesOnRootQueue: Bool
    /// Whether a request's setup waits for its first `resume()` (`Session.RequestSetup.lazy`).
    let setsUpLazily: Bool
    /// Whether adding a response handler resumes a request (`Session.startRequestsImmediately`).
    let startsImmediately: Bool
    /// The redirect handler of requests without their own.
    let redirectHandler: (any RedirectHandler)?
    /// The cache handler of requests without their own.
    let cachedResponseHandler: (any CachedResponseHandler)?
    /// The HTTP cache of the configuration, if it has one: requests offer it their responses and
    /// refresh what it stores from a 304.
    let httpCache: HTTPCache?
    /// The engine a WebSocket upgrade runs on when the owner has one; see `webSocketEngine`.
    private let engine: ConnectionEngine?
    /// Queues work on the owner's callback queue (the default queue of handlers on Linux) without
    /// a block; nil when the owner has none of its own.
    let callbackQueueEntry: SerialQueueEntry?

    init(rootQueueRunner: RootQueueRunner,
         serializesOnRootQueue: Bool,
         setsUpLazily: Bool,
         startsImmediately: Bool,
         redirectHandler: (any RedirectHandler)? = nil,
         cachedResponseHandler: (any CachedResponseHandler)? = nil,
         httpCache: HTTPCache? = nil,
         engine: ConnectionEngine? = nil,
         callbackQueue: DispatchQueue? = nil) {
        self.rootQueueRunner = rootQueueRunner
        self.serializesOnRootQueue = serializesOnRootQueue
        self.setsUpLazily = setsUpLazily
        self.startsImmediately = startsImmediately
        self.redirectHandler = redirectHandler
        self.cachedResponseHandler = cachedResponseHandler
        self.httpCache = httpCache
        self.engine = engine
        callbackQueueEntry = callbackQueue.map(SerialQueueEntry.init(queue:))
    }

    /// The engine a WebSocket upgrade runs on: the owner's own, or a shared one when the owner
    /// runs on another transport (a test double), since the upgrade needs a connection of its own.
    /// The shared engine is made only when a WebSocket request asks for it.
    var webSocketEngine: ConnectionEngine {
        engine ?? WebSocketConnection.standaloneEngine
    }
}
