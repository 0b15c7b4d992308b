import Dispatch
import Synchronization

/// A `response...` or `serializing...` handler of a DataRequest or DownloadRequest, as one object.
///
/// Its steps, as Alamofire runs them: read and serialize the outcome on the serialization queue
/// (the request's queue for an unserialized read); on the request's queue, report the response to
/// the monitors and, for a failed serializer, ask the retriers; once every handler of the request
/// has run, deliver the response to its queue or to the awaiting task.
///
/// Restated `@unchecked Sendable` of its superclass: its own stored properties are `Sendable` or
/// behind `outcome`'s lock.
final class ResponseHandler<Reading: ResponseReading>: PendingResponse<Reading.Response>, ResponseHandlerStep,
    DeferredRootQueueWork, @unchecked Sendable {
    private let request: Reading.Owner
    private let reading: Reading
    private let delivery: ResponseDelivery<Reading.Response>
    /// The response read in the last run, and the retrier's error that replaces its result.
    private let outcome = Mutex<(response: Reading.Response?, replacement: AFError?)>((nil, nil))

    private init(request: Reading.Owner, reading: Reading, delivery: ResponseDelivery<Reading.Response>) {
        self.request = request
        self.reading = reading
        self.delivery = delivery
        super.init()
    }

    /// Queues a handler on `request` that reads its outcome with `reading` and calls
    /// `completionHandler` on `queue` (the Session's queue for `.lupineDefault`).
    static func append(to request: Reading.Owner, reading: Reading, queue: DispatchQueue,
                       completionHandler: @escaping @Sendable (Reading.Response) -> Void) {
        let queue = queue.resolvingLupineDefault(to: request.defaultQueue)
        let handler = ResponseHandler(request: request, reading: reading, delivery: .handler(queue, completionHandler))
        request.appendResponseHandler(.step(handler), startsOnCallingThread: false)
    }

    /// Queues a handler on `request` whose response the async API awaits, and returns it as that
    /// box; the request leaves from the calling thread when it may (see `appendResponseHandler`).
    static func appendAwaited(to request: Reading.Owner, reading: Reading) -> PendingResponse<Reading.Response> {
        let handler = ResponseHandler(request: request, reading: reading, delivery: .awaited)
        request.appendResponseHandler(.step(handler), startsOnCallingThread: true)
        return handler
    }

    // The steps run specialized for the non-generic serializers Lupine ships: generic code looks
    // up the metadata of each generic response type it touches, on every response.
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<DataResponseSerializer>)
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<StringResponseSerializer>)
    func run() {
        if reading.serializes {
            if request.canRunOnSerializationQueueNow {
                read()
            } else {
                request.serializationQueue.async { self.read() }
            }
        } else if request.isOnUnderlyingQueue {
            read()
        } else {
            request.underlyingQueue.async { self.read() }
        }
    }

    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<DataResponseSerializer>)
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<StringResponseSerializer>)
    private func read() {
        ThreadContract.userCode("a response serializer")
        let response = reading.read(request)
        outcome.withLock { $0 = (response, nil) }
        if request.isOnUnderlyingQueue {
            report(response)
        } else {
            request.underlyingQueue.async { self.report(response) }
        }
    }

    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<DataResponseSerializer>)
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<StringResponseSerializer>)
    private func report(_ response: Reading.Response) {
        if request.monitorsWant(reading.parsedEvent) {
            let request = request, reading = reading
            request.notify(reading.parsedEvent) { reading.report(response, of: request, to: $0) }
        }
        request.completeSerialization(failure: reading.serializes ? response.error : nil, handler: self)
    }

    /// Replaces the result with a retrier's error before delivery.
    func replaceResult(with error: AFError) {
        outcome.withLock { $0.replacement = error }
    }

    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<DataResponseSerializer>)
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<StringResponseSerializer>)
    func deliver() {
        switch delivery {
        case let .handler(queue, _):
            // On the Session's callback queue (the default), queued with the handler as the
            // context of a C function: no block. Elsewhere the closure holds the handler alone,
            // which is then its context: one allocation fewer than a closure holding the
            // completion handler and the response.
            if let entry = request.defaults.callbackQueueEntry, entry.queue === queue {
                entry.async(retaining: self) { context in
                    (SerialQueueEntry.takeRetained(context, as: AnyObject.self) as? any QueuedCompletionDelivery)?
                        .callCompletionHandler()
                }
            } else {
                queue.async { self.callCompletionHandler() }
            }
        case .awaited:
            // The awaiting task is woken once the root-queue work delivering the response is
            // over: it then finds the root queue free for its next request. The response is read
            // then, once.
            request.defaults.rootQueueRunner.afterCurrentWork(self)
        }
    }

    /// Calls the completion handler with the response, on the handler's queue.
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<DataResponseSerializer>)
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<StringResponseSerializer>)
    func callCompletionHandler() {
        guard case let .handler(_, completionHandler) = delivery, let response = deliveredResponse() else { return }
        completionHandler(response)
    }

    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<DataResponseSerializer>)
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<StringResponseSerializer>)
    func runAfterRootQueueWork() {
        guard case .awaited = delivery, let response = deliveredResponse() else { return }
        fulfil(response)
    }

    // MARK: Running the end of the exchange on the awaiting task

    var isAwaited: Bool {
        if case .awaited = delivery { return true }
        return false
    }

    var deliveryQueue: DispatchQueue? {
        if case let .handler(queue, _) = delivery { return queue }
        return nil
    }

    override func awaiterDidSuspend() {
        request.offerToRunCompletion(self)
    }

    override func runHandedOverWork() {
        request.runHandedOverCompletion()
    }

    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<DataResponseSerializer>)
    @_specialize(exported: false, kind: full, where Reading == DataResponseReading<StringResponseSerializer>)
    private func deliveredResponse() -> Reading.Response? {
        // Read in place: copying the pair out would look up the metadata of its generic tuple type
        // for every response. Taken out, not copied: a response is delivered once per run of the
        // handler (a new run reads a new one), and the handler then dies holding no response,
        // whose destruction through the generic tuple cost more than the copy.
        outcome.withLock { outcome in
            guard let response = outcome.response.take() else { return nil }
            return outcome.replacement.map { response.replacingResult(with: $0) } ?? response
        }
    }
}

/// A response handler whose completion was queued without naming its generic type (the C
/// function `SerialQueueEntry.async(retaining:_:)` runs cannot).
protocol QueuedCompletionDelivery: AnyObject {
    /// Calls the completion handler with the delivered response.
    func callCompletionHandler()
}

extension ResponseHandler: QueuedCompletionDelivery {}
