import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Lupine
import Synchronization
import OpenAPIRuntime

/// Runs one operation of `LupineClientTransport` as a `DataStreamRequest` and hands its response
/// to the generated client when the head arrives, with a body that yields the parts as they come.
///
/// The request's events (each attempt's head, its body parts, the end of each attempt, the end of
/// the request) all arrive on one serial queue of this operation's own, in order, and go through
/// `ResponseStreamStateMachine`; the caller's body iterator asks the same state machine. Nothing
/// here runs user code: the queue only moves parts and decisions.
///
/// Pacing: a body part counts as handled by the request only once the caller's iterator has
/// taken it, and the request stops reading the socket while more than about 1 MiB (or 64 parts)
/// is handed out and not handled (`DataStreamRequest`'s backpressure). A caller that reads slowly
/// therefore slows the server down, and what is buffered for it stays around 1 MiB.
///
/// The request and its handlers do not keep this object: the caller's body (or `send`, while it
/// waits) does, and this object keeps the request and its Session. When the caller lets go of an
/// unfinished body, the request is cancelled.
final class ResponseStream: Sendable {
    typealias Machine = ResponseStreamStateMachine<CheckedContinuation<ResponseDelivery, any Error>,
                                                   CheckedContinuation<Data?, any Error>>

    private let request: DataStreamRequest
    /// Kept for the request: a Session that goes away fails its requests, and the caller may read
    /// the body long after the transport (and the client holding it) are gone.
    private let session: Session
    private let method: HTTPRequest.Method
    private let state: Mutex<Machine>

    /// The most bytes of an unacceptable response's body held while the retriers decide.
    static let heldBodyLimit = 1 << 20

    /// Sets up the handlers of `request`, made by `session` and not resumed yet.
    init(request: DataStreamRequest, session: Session, method: HTTPRequest.Method, acceptableStatusCodes: Range<Int>?) {
        self.request = request
        self.session = session
        self.method = method
        state = Mutex(Machine(heldBodyLimit: Self.heldBodyLimit))
        let queue = DispatchQueue(label: "lupine.openapi.response-\(request.id)")
        request.onHTTPResponse(on: queue) { [weak self] response, completionHandler in
            guard let self else { return completionHandler(.cancel) }
            completionHandler(headArrived(response, acceptableStatusCodes: acceptableStatusCodes) ? .allow : .cancel)
        }
        request.addStreamHandler(on: queue, serialize: { data, emit in emit(.success(data)) }) {
            [weak self] (stream: DataStreamRequest.Stream<Data, Never>, done: @escaping @Sendable () -> Void) in
            guard let self else { return done() }
            switch stream.event {
            case let .stream(result):
                guard case let .success(data) = result else { return done() }
                perform(state.withLock { $0.partArrived(data, release: done) })
            case let .complete(completion):
                perform(state.withLock { $0.requestCompleted(error: completion.error) })
            }
        }
        // A status outside the acceptable ones fails validation so that the retriers see it, unless
        // the caller already has that response (see `ResponseStreamStateMachine`).
        if let acceptableStatusCodes {
            request.validate { [weak self] _, response in
                if acceptableStatusCodes.contains(response.statusCode) || self?.hasDeliveredResponse ?? true {
                    return .success(())
                }
                return .failure(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: response.statusCode)))
            }
        }
        request.eventMonitor(AttemptEndObserver(queue: queue, stream: self))
    }

    deinit {
        bodyAbandoned()
    }

    /// The caller let go of the body (or of its one iteration): an unfinished one is cancelled.
    func bodyAbandoned() {
        perform(state.withLock { $0.bodyAbandoned() })
    }

    private var hasDeliveredResponse: Bool {
        state.withLock { $0.hasDeliveredResponse }
    }

    // MARK: The caller

    /// Starts the request and returns its response once the head arrives.
    ///
    /// Cancelling the calling task cancels the request.
    func response() async throws -> (HTTPResponse, HTTPBody?) {
        let request = request
        let delivery = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ResponseDelivery, any Error>) in
                perform(state.withLock { $0.responseRequested(by: continuation) })
                request.resume()
            }
        } onCancel: {
            request.cancel()
        }
        let framing = ResponseBodyFraming(head: delivery.head, method: method)
        switch framing {
        case .none:
            return (delivery.head, nil)
        case .empty:
            return (delivery.head, HTTPBody())
        case let .streamed(length):
            guard delivery.streamsBody else { return (delivery.head, HTTPBody()) }
            return (delivery.head, HTTPBody(ResponseBodyParts(stream: self), length: length, iterationBehavior: .single))
        }
    }

    /// The next part of the body for the caller's iterator; nil at its end.
    func nextPart() async throws -> Data? {
        // Without a wait when a part is at hand.
        let (ready, effects) = state.withLock { $0.nextBodyEvent(waiter: nil) }
        perform(effects)
        if let ready { return try Self.value(of: ready) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let (event, effects) = state.withLock { $0.nextBodyEvent(waiter: continuation) }
                perform(effects)
                if let event { continuation.resume(with: Result { try Self.value(of: event) }) }
            }
        } onCancel: {
            perform(state.withLock { $0.bodyIterationCancelled() })
        }
    }

    private static func value(of event: ResponseBodyEvent) throws -> Data? {
        switch event {
        case let .part(data): data
        case .end: nil
        case let .failure(error): throw error
        }
    }

    // MARK: The request's events (on this operation's queue)

    /// Whether the body of this head may flow.
    private func headArrived(_ response: HTTPURLResponse, acceptableStatusCodes: Range<Int>?) -> Bool {
        let head = Self.head(of: response)
        let isAcceptable = acceptableStatusCodes?.contains(response.statusCode) ?? true
        let streamsBody = ResponseBodyFraming(head: head, method: method).streamsBody
        let (allow, effects) = state.withLock { $0.headArrived(head, isAcceptable: isAcceptable, streamsBody: streamsBody) }
        perform(effects)
        return allow
    }

    fileprivate func attemptCompleted(error: AFError?) {
        perform(state.withLock { $0.attemptCompleted(error: error) })
    }

    private func perform(_ effects: Machine.Effects) {
        for release in effects.releases { release() }
        if let (waiter, result) = effects.response { waiter.resume(with: result) }
        if let (waiter, event) = effects.body { waiter.resume(with: Result { try Self.value(of: event) }) }
        if effects.cancelRequest { request.cancel() }
    }

    /// The head as swift-http-types has it.
    static func head(of response: HTTPURLResponse) -> HTTPResponse {
        var fields = HTTPFields()
        for (key, value) in response.allHeaderFields {
            guard let text = key as? String, let name = HTTPField.Name(text) else { continue }
            fields.append(HTTPField(name: name, value: "\(value)"))
        }
        return HTTPResponse(status: HTTPResponse.Status(code: response.statusCode), headerFields: fields)
    }
}

/// Learns of the end of each attempt of one operation's request, on that operation's queue: after
/// the attempt's last body part, before any retry.
private final class AttemptEndObserver: EventMonitor {
    let queue: DispatchQueue
    private weak let stream: ResponseStream?

    init(queue: DispatchQueue, stream: ResponseStream) {
        self.queue = queue
        self.stream = stream
    }

    func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        stream?.attemptCompleted(error: error)
    }
}

/// The body of one operation's response: the parts of `ResponseStream` as swift-openapi-runtime
/// byte chunks. It is iterated once (`HTTPBody` makes sure of that), so an iteration that ends
/// before the body does (a `break`, a thrown error) lets go of the body and cancels the request.
struct ResponseBodyParts: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk

    let stream: ResponseStream

    func makeAsyncIterator() -> Iterator {
        Iterator(iteration: Iteration(stream: stream))
    }

    struct Iterator: AsyncIteratorProtocol {
        let iteration: Iteration

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            try await iteration.stream.nextPart().map { HTTPBody.ByteChunk($0) }
        }
    }

    /// One iteration of the body; when it goes away, so does the caller's interest in the rest.
    final class Iteration: Sendable {
        let stream: ResponseStream

        init(stream: ResponseStream) {
            self.stream = stream
        }

        deinit {
            stream.bodyAbandoned()
        }
    }
}
