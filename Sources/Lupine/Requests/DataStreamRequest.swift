import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// A request whose response body is handed to stream handlers chunk by chunk as it arrives,
/// never collected.
///
/// Each `responseStream...` call adds a handler that gets every chunk arriving after it was added,
/// then one `.complete` event. Delivery has backpressure: when the handlers fall behind (more than
/// about 1 MiB or 64 chunks handed out and not yet handled), the request stops reading the socket,
/// so TCP slows the server down, and reads again once the handlers have caught up. A slow handler
/// therefore slows the transfer instead of filling memory.
public final class DataStreamRequest: Request, @unchecked Sendable {
    /// A stream handler. Throwing from it cancels the request and records the error as
    /// `AFError.responseSerializationFailed(reason: .customSerializationFailed(error:))` (an
    /// `AFError` is recorded as is); errors thrown for a `.complete` event are ignored.
    public typealias Handler<Success, Failure: Error> = @Sendable (Stream<Success, Failure>) throws -> Void

    /// The value the URLRequest is built from.
    public let convertible: any URLRequestConvertible
    /// Whether a `DataStreamSerializer` failure cancels the request (the failure is still delivered).
    public let automaticallyCancelOnStreamError: Bool

    /// Makes the body a hop sends, from the URLRequest of that hop; nil sends none. Only the
    /// integrations of this package use it (the OpenAPI transport streams its `HTTPBody` through
    /// it): Alamofire's stream requests send the URLRequest's own body.
    package typealias BodySource = @Sendable (_ hopRequest: URLRequest) throws -> TransportRequestBody?

    /// The body of every hop, when set; else the URLRequest's own.
    let bodySource: BodySource?

    /// Hands one body part to one handler; calls `finished` once the handler is done with it.
    typealias ChunkConsumer = @Sendable (_ data: Data, _ finished: @escaping @Sendable () -> Void) -> Void

    struct StreamState {
        var delivery = StreamDelivery()
        var consumers: [Int: ChunkConsumer] = [:]
        /// `.complete` events waiting for their handler's last chunk.
        var waitingCompletions: [Int: @Sendable () -> Void] = [:]
        var validators: [@Sendable () -> Void] = []
        var receivedBytes: Int64 = 0
        var expectedBytes: Int64 = -1
        /// A copy of the current response's body for the HTTP cache, kept while it is no larger
        /// than `cacheBodyLimit`; nil once it outgrew it (the response is then not offered).
        var cacheBody: Data?
        var cacheBodyLimit = 0
    }

    let streamState = NIOLockedValueBox(StreamState())

    /// The serial queue the async streams of `streamTask()` deliver on.
    let streamCompletionQueue: DispatchQueue

    init(convertible: any URLRequestConvertible, automaticallyCancelOnStreamError: Bool, bodySource: BodySource? = nil,
         context: RequestContext) {
        self.convertible = convertible
        self.automaticallyCancelOnStreamError = automaticallyCancelOnStreamError
        self.bodySource = bodySource
        self.streamCompletionQueue = DispatchQueue(label: "lupine.concurrencyStreamCompletionQueue-\(context.id)")
        super.init(context: context)
    }

    override var urlRequestConvertible: (any URLRequestConvertible)? { convertible }

    override var usesHTTPCache: Bool { true }

    override var responseBodyForCache: Data? { streamState.withLockedValue { $0.cacheBody } }

    override func transportBody(for urlRequest: URLRequest) throws -> TransportRequestBody? {
        guard let bodySource else { return try super.transportBody(for: urlRequest) }
        return try bodySource(urlRequest)
    }

    // MARK: Sink

    override func didReceiveResponseHead(_ response: LazyHTTPResponse, task: any TransportTask) {
        let expected = response.expectedContentLength
        // A copy for the cache is kept only for a response the cache may take.
        let cacheLimit = response.head.forbidsStoring ? 0 : defaults.httpCache?.largestStorableBodySize ?? 0
        streamState.withLockedValue { state in
            state.receivedBytes = 0
            state.expectedBytes = expected
            state.cacheBodyLimit = cacheLimit
            state.cacheBody = cacheLimit > 0 && (expected < 0 || expected <= Int64(cacheLimit)) ? Data() : nil
        }
        updateDownloadProgress(expected: expected, received: 0, notifying: false)
        askHTTPResponseHandler(response, task: task)
    }

    override func didReceiveBodyPart(_ data: Data, task: any TransportTask) {
        let (consumers, shouldPause, received) = streamState.withLockedValue { state in
            state.receivedBytes += Int64(data.count)
            if let kept = state.cacheBody?.count {
                if kept + data.count <= state.cacheBodyLimit {
                    state.cacheBody?.append(data)
                } else {
                    state.cacheBody = nil
                }
            }
            // Recorded in the same critical section as the decision, so that a handler catching
            // up on another thread cannot reach the demand first.
            let shouldPause = state.delivery.partArrived(byteCount: data.count)
            if shouldPause { readDemand.record(.streamConsumer, present: true) }
            let consumers = state.delivery.handlerIDs.compactMap { id in state.consumers[id].map { (id, $0) } }
            return (consumers, shouldPause, state.receivedBytes)
        }
        if shouldPause { readDemand.settle() }
        updateDownloadProgress(expected: nil, received: received)
        let byteCount = data.count
        for (id, consume) in consumers {
            consume(data) { self.deliveryFinished(handler: id, byteCount: byteCount) }
        }
    }

    private func deliveryFinished(handler id: Int, byteCount: Int) {
        let (resumeReading, completion) = streamState.withLockedValue { state -> (Bool, (@Sendable () -> Void)?) in
            let outcome = state.delivery.deliveryFinished(handler: id, byteCount: byteCount)
            if outcome.resumeReading { readDemand.record(.streamConsumer, present: false) }
            let completion = outcome.sendCompletion ? state.waitingCompletions.removeValue(forKey: id) : nil
            return (outcome.resumeReading, completion)
        }
        if resumeReading { readDemand.settle() }
        completion?()
    }

    override func resetForRetry() {
        // A pause for handlers still behind carries over to the next attempt's exchange.
        streamState.withLockedValue { state in
            state.receivedBytes = 0
            state.expectedBytes = -1
            state.cacheBody = nil
        }
    }

    override func runValidators() {
        let validators = streamState.withLockedValue { $0.validators }
        validators.forEach { $0() }
    }

    // MARK: Handlers

    /// Adds a handler: every chunk arriving from now on goes through `serialize`, then to
    /// `handler` on `queue`; once the request has finished and `handler` has had all its chunks,
    /// it gets the `.complete` event. `handler` calls its second argument once it is done with a
    /// `.stream` event (that is what backpressure waits for). Package-wide: the OpenAPI transport
    /// hands each chunk to its caller's body and calls `done` once the caller has taken it.
    package func addStreamHandler<Success: Sendable, Failure: Error & Sendable>(
        on queue: DispatchQueue,
        serialize: @escaping @Sendable (Data, _ emit: @escaping @Sendable (Result<Success, Failure>) -> Void) -> Void,
        handler: @escaping @Sendable (Stream<Success, Failure>, _ done: @escaping @Sendable () -> Void) throws -> Void
    ) {
        let token = CancellationToken(self)
        // Held by the request until its completion is sent, which breaks the cycle.
        let consumer: ChunkConsumer = { data, finished in
            serialize(data) { result in
                queue.async {
                    self.capturingError { try handler(Stream(event: .stream(result), token: token), finished) }
                }
            }
        }
        let id = streamState.withLockedValue { state in
            let id = state.delivery.addHandler()
            state.consumers[id] = consumer
            return id
        }
        appendResponseSerializer {
            self.underlyingQueue.async {
                self.responseSerializerDidComplete {
                    let send: @Sendable () -> Void = { self.sendCompletion(on: queue, token: token, handler: handler) }
                    let sendNow = self.streamState.withLockedValue { state in
                        state.consumers[id] = nil
                        let now = state.delivery.completionRequested(handler: id)
                        if !now { state.waitingCompletions[id] = send }
                        return now
                    }
                    if sendNow { send() }
                }
            }
        }
    }

    /// The same, for a handler that is done when it returns.
    func addStreamHandler<Success: Sendable, Failure: Error & Sendable>(
        on queue: DispatchQueue,
        serialize: @escaping @Sendable (Data, _ emit: @escaping @Sendable (Result<Success, Failure>) -> Void) -> Void,
        handler: @escaping Handler<Success, Failure>
    ) {
        addStreamHandler(on: queue, serialize: serialize) { (stream: Stream<Success, Failure>, done: @escaping @Sendable () -> Void) in
            defer { done() }
            try handler(stream)
        }
    }

    private func sendCompletion<Success: Sendable, Failure: Error & Sendable>(
        on queue: DispatchQueue,
        token: CancellationToken,
        handler: @escaping @Sendable (Stream<Success, Failure>, _ done: @escaping @Sendable () -> Void) throws -> Void
    ) {
        queue.async {
            let completion = Completion(request: self.request, response: self.response, metrics: nil, error: self.error)
            // Nothing can be done with an error thrown for the completion: the request is over.
            try? handler(Stream(event: .complete(completion), token: token), {})
        }
    }

    /// Runs a handler; an error it throws is recorded and cancels the request.
    private func capturingError(_ body: () throws -> Void) {
        do {
            try body()
        } catch {
            self.error = error.asAFError ?? .responseSerializationFailed(reason: .customSerializationFailed(error: error))
            cancel()
        }
    }

    // MARK: Validation and response head handlers

    /// Adds a validation closure, run when the response is complete (in the order added, while
    /// there is no error). Streams have no body to validate: the closure gets the request and the
    /// response. A failure that is not an `AFError` becomes
    /// `.responseValidationFailed(reason: .customValidationFailed(error:))`.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        let validator: @Sendable () -> Void = { [unowned self] in
            guard self.error == nil, let response = self.response else { return }
            let request = self.request
            ThreadContract.userCode("a validator")
            let result = validation(request, response)
            if case let .failure(error) = result {
                self.error = error.asAFError ?? .responseValidationFailed(reason: .customValidationFailed(error: error))
            }
            self.notify(.didValidateStream) { $0.request(self, didValidateRequest: request, response: response, withResult: result) }
        }
        streamState.withLockedValue { $0.validators.append(validator) }
        return self
    }

    /// Calls `handler` on `queue` with each final HTTPURLResponse; the body is held until the
    /// handler answers `.allow`, and `.cancel` cancels the request. Only the last handler set is used.
    @_disfavoredOverload
    @preconcurrency
    @discardableResult
    public func onHTTPResponse(
        on queue: DispatchQueue = .lupineDefault,
        perform handler: @escaping @Sendable (_ response: HTTPURLResponse,
                                              _ completionHandler: @escaping @Sendable (ResponseDisposition) -> Void) -> Void
    ) -> Self {
        setHTTPResponseHandler(queue: queue, handler)
        return self
    }

    /// Calls `handler` on `queue` with each final HTTPURLResponse (observation only).
    @preconcurrency
    @discardableResult
    public func onHTTPResponse(on queue: DispatchQueue = .lupineDefault,
                               perform handler: @escaping @Sendable (HTTPURLResponse) -> Void) -> Self {
        onHTTPResponse(on: queue) { response, completionHandler in
            handler(response)
            completionHandler(.allow)
        }
    }
}
