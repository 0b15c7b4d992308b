import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// One line of `/stream/N`.
private struct Line: Decodable, Sendable {
    let id: Int
    let url: String
}

/// What one stream handler saw: its chunks or values, in order, and its completion.
private final class StreamLog<Success: Sendable>: Sendable {
    let values = Locked<[Success]>([])
    let failures = Locked<[AFError]>([])
    let completion = Locked<DataStreamRequest.Completion?>(nil)
    let order: Locked<[String]>
    let name: String

    init(_ name: String, order: Locked<[String]> = Locked([])) {
        self.name = name
        self.order = order
    }

    func record<Failure: Error>(_ stream: DataStreamRequest.Stream<Success, Failure>) {
        switch stream.event {
        case let .stream(result):
            order.withValue { $0.append("\(name) stream") }
            switch result {
            case let .success(value): values.withValue { $0.append(value) }
            case let .failure(error): failures.withValue { $0.append(error.asAFError ?? .explicitlyCancelled) }
            }
        case let .complete(completion):
            order.withValue { $0.append("\(name) complete") }
            self.completion.withValue { $0 = completion }
        }
    }

    var isComplete: Bool { completion.current != nil }
}

/// Behaviour that Alamofire's DataStreamTests assert, over loopback.
@Suite struct DataStreamAlamofireParityTests {
    @Test func onHTTPResponseAllowingContinuesWithTheSameResponse() async throws {
        let server = try await testServer()
        let order = Locked<[String]>([])
        let log = StreamLog<Data>("data", order: order)
        let initial = Locked<HTTPURLResponse?>(nil)
        let queue = DispatchQueue(label: "test.stream.order")

        AF.streamRequest(server.url("/bytes/5"))
            .onHTTPResponse(on: queue) { response, completionHandler in
                initial.withValue { $0 = response }
                order.withValue { $0.append("response") }
                completionHandler(.allow)
            }
            .responseStream(on: queue) { log.record($0) }

        #expect(await waitUntil { log.isComplete })
        #expect(order.current.first == "response")
        #expect(order.current.last == "data complete")
        #expect(log.values.current.reduce(Data(), +).count == 5)
        let completion = try #require(log.completion.current)
        #expect(completion.response?.statusCode == 200)
        #expect(completion.response == initial.current)
        #expect(completion.error == nil)
    }

    @Test func onHTTPResponseCancellingEndsWithoutStreamEvents() async throws {
        let server = try await testServer()
        let log = StreamLog<Data>("data")
        let initial = Locked<HTTPURLResponse?>(nil)

        AF.streamRequest(server.url("/bytes/5"))
            .onHTTPResponse { response, completionHandler in
                initial.withValue { $0 = response }
                completionHandler(.cancel)
            }
            .responseStream { log.record($0) }

        #expect(await waitUntil { log.isComplete })
        #expect(log.values.current.isEmpty)
        let completion = try #require(log.completion.current)
        #expect(completion.response?.statusCode == 200)
        #expect(completion.response == initial.current)
        #expect(completion.error?.isExplicitlyCancelledError == true)
    }

    @Test func dataAndDecodableHandlersOnOneRequestBothCompleteWithTheResponse() async throws {
        let server = try await testServer()
        let initial = Locked<HTTPURLResponse?>(nil)
        let data = StreamLog<Data>("data")
        let decoded = StreamLog<Line>("decoded")

        AF.streamRequest(server.url("/stream/1"))
            .onHTTPResponse { response in initial.withValue { $0 = response } }
            .responseStream { data.record($0) }
            .responseStreamDecodable(of: Line.self) { decoded.record($0) }

        #expect(await waitUntil { data.isComplete && decoded.isComplete })
        #expect(!data.values.current.isEmpty)
        #expect(decoded.values.current.map(\.id) == [0])
        #expect(decoded.failures.current.isEmpty)
        #expect(data.completion.current?.response == initial.current)
        #expect(decoded.completion.current?.response == initial.current)
        #expect(initial.current?.statusCode == 200)
    }

    @Test func stringAndDecodableHandlersRunOnTheGivenQueue() async throws {
        let server = try await testServer()
        let queue = DispatchQueue(label: "test.stream.arbitrary")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let offQueue = Locked(0)
        let string = StreamLog<String>("string")
        let decoded = StreamLog<Line>("decoded")

        AF.streamRequest(server.url("/stream/1")).responseStreamString(on: queue) { stream in
            if DispatchQueue.getSpecific(key: key) != true { offQueue.withValue { $0 += 1 } }
            string.record(stream)
        }
        AF.streamRequest(server.url("/stream/1")).responseStreamDecodable(of: Line.self, on: queue) { stream in
            if DispatchQueue.getSpecific(key: key) != true { offQueue.withValue { $0 += 1 } }
            decoded.record(stream)
        }

        #expect(await waitUntil { string.isComplete && decoded.isComplete })
        #expect(offQueue.current == 0)
        #expect(!string.values.current.isEmpty)
        #expect(decoded.values.current.count == 1)
        #expect(string.completion.current?.response?.statusCode == 200)
        #expect(decoded.completion.current?.response?.statusCode == 200)
    }

    @Test func streamSerializerCanBeUsedDirectlyOnAManuallyResumedRequest() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let decoded = StreamLog<Line>("decoded")

        session.streamRequest(server.url("/stream/1"))
            .responseStream(using: DecodableStreamSerializer<Line>()) { decoded.record($0) }
            .resume()

        #expect(await waitUntil { decoded.isComplete })
        #expect(decoded.values.current.count == 1)
        #expect(decoded.completion.current?.response?.statusCode == 200)
    }

    private struct ClosureFailure: Error {}

    @Test func serializerFailureWithAutomaticCancellingEndsExplicitlyCancelledWithTheResponse() async throws {
        let server = try await testServer()
        let decoded = StreamLog<Line>("decoded")

        AF.streamRequest(server.url("/bytes/50"), automaticallyCancelOnStreamError: true)
            .responseStreamDecodable(of: Line.self) { decoded.record($0) }

        #expect(await waitUntil { decoded.isComplete })
        let completion = try #require(decoded.completion.current)
        #expect(completion.response?.statusCode == 200)
        #expect(completion.error?.isExplicitlyCancelledError == true, "\(String(describing: completion.error))")
    }

    @Test func throwingHandlerEndsWithItsErrorAndTheResponse() async throws {
        let server = try await testServer()
        let completion = Locked<DataStreamRequest.Completion?>(nil)

        AF.streamRequest(server.url("/bytes/50")).responseStream { stream in
            if let finished = stream.completion { completion.withValue { $0 = finished } }
            if stream.value != nil { throw ClosureFailure() }
        }

        #expect(await waitUntil { completion.current != nil })
        #expect(completion.current?.response?.statusCode == 200)
        #expect(completion.current?.error?.isExplicitlyCancelledError == false)
    }

    /// The whole body (one byte) has arrived when the handler cancels. As in Alamofire, the
    /// handler runs on its own queue while the request finishes on the root queue, so the cancel
    /// may come first (the request ends explicitly cancelled) or second (a finished request is
    /// not cancelled again). What holds either way: the `.complete` event waits for the handler,
    /// comes once, keeps the 200 response, and its error is the request's final one.
    @Test(arguments: [false, true])
    func cancellingFromTheHandlerOfTheLastChunkEndsInTheRequestsFinalState(byToken: Bool) async throws {
        let server = try await testServer()
        let log = StreamLog<Data>("data")
        let handlerReturned = Locked(false)

        let request = AF.streamRequest(server.url("/bytes/1")).responseStream { stream in
            if stream.completion != nil {
                #expect(handlerReturned.current, "the .complete event went out before the chunk's handler returned")
            }
            log.record(stream)
            if stream.value != nil {
                if byToken { stream.token.cancel() } else { stream.cancel() }
                handlerReturned.withValue { $0 = true }
            }
        }

        #expect(await waitUntil { log.isComplete })
        #expect(log.values.current.count == 1)
        let completion = try #require(log.completion.current)
        #expect(completion.response?.statusCode == 200)
        #expect(request.isFinished || request.isCancelled)
        #expect((completion.error?.isExplicitlyCancelledError ?? false) == request.isCancelled,
                "\(String(describing: completion.error)), cancelled: \(request.isCancelled)")
        if !request.isCancelled { #expect(completion.error == nil) }
    }

    /// A body still arriving when a chunk's handler cancels: the request ends explicitly
    /// cancelled, whichever way the handler cancels.
    @Test(arguments: [false, true])
    func cancellingFromAChunkHandlerWhileTheBodyArrivesEndsExplicitlyCancelled(byToken: Bool) async throws {
        let server = try await testServer()
        let log = StreamLog<Data>("data")
        let cancelled = Locked(false)

        let request = AF.streamRequest(server.url("/drip?numbytes=20&duration=4")).responseStream { stream in
            log.record(stream)
            if stream.value != nil, !cancelled.current {
                cancelled.withValue { $0 = true }
                if byToken { stream.token.cancel() } else { stream.cancel() }
            }
        }

        #expect(await waitUntil { log.isComplete })
        #expect(request.isCancelled)
        #expect(log.values.current.count < 20)
        let error = log.completion.current?.error
        #expect(error?.isExplicitlyCancelledError == true, "\(String(describing: error))")
    }

    @Test func failedValidationDeliversNoData() async throws {
        let server = try await testServer()
        let log = StreamLog<Data>("data")

        AF.streamRequest(server.url("/status/401")).validate().responseStream { log.record($0) }

        #expect(await waitUntil { log.isComplete })
        #expect(log.values.current.isEmpty)
        #expect(log.completion.current?.error?.isResponseValidationError == true)
    }

    /// Retries a failed stream once, to `/bytes/1000`, as Alamofire's `GoodRetry` does.
    private final class RetryToBytes: RequestInterceptor, Sendable {
        let retried = Locked(false)
        let bytesURL: URL

        init(bytesURL: URL) { self.bytesURL = bytesURL }

        func adapt(_ urlRequest: URLRequest, for session: Session,
                   completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            completion(.success(retried.current ? URLRequest(url: bytesURL) : urlRequest))
        }

        func retry(_ request: Request, for session: Session, dueTo error: any Error,
                   completion: @escaping @Sendable (RetryResult) -> Void) {
            let first = retried.withValue { value -> Bool in
                defer { value = true }
                return !value
            }
            completion(first ? .retry : .doNotRetry)
        }
    }

    @Test func failedStreamIsRetriedAndOnlyTheRetrysBodyIsDelivered() async throws {
        let server = try await testServer()
        let session = Session(interceptor: RetryToBytes(bytesURL: try #require(URL(string: server.url("/bytes/1000")))))
        let log = StreamLog<Data>("data")

        session.streamRequest(server.url("/status/401")).validate().responseStream { log.record($0) }

        #expect(await waitUntil { log.isComplete })
        #expect(log.values.current.reduce(Data(), +).count == 1000)
        #expect(log.completion.current?.response?.statusCode == 200)
        #expect(log.completion.current?.error == nil)
    }

    @Test func redirectorCanReplaceTheRedirectedStreamRequest() async throws {
        let server = try await testServer()
        let streamURL = try #require(URL(string: server.url("/stream/1")))
        let redirected = Locked(0)
        let redirector = Redirector(behavior: .modify { _, _, _ in
            redirected.withValue { $0 += 1 }
            return URLRequest(url: streamURL)
        })
        let decoded = StreamLog<Line>("decoded")

        AF.streamRequest(server.url("/status/301")).redirect(using: redirector)
            .responseStreamDecodable(of: Line.self) { decoded.record($0) }

        #expect(await waitUntil { decoded.isComplete })
        #expect(redirected.current == 1)
        #expect(decoded.values.current.count == 1)
        #expect(decoded.failures.current.isEmpty)
        #expect(decoded.completion.current?.response?.statusCode == 200)
    }

    @Test func streamAsksItsCachedResponseHandlerLikeADataRequest() async throws {
        let server = try await testServer()
        let asked = Locked(0)
        let cacher = ResponseCacher(behavior: .modify { _, _ in
            asked.withValue { $0 += 1 }
            return nil
        })
        let decoded = StreamLog<Line>("decoded")

        AF.streamRequest(server.url("/stream/1")).cacheResponse(using: cacher)
            .responseStreamDecodable(of: Line.self) { decoded.record($0) }

        #expect(await waitUntil { decoded.isComplete })
        #expect(decoded.values.current.count == 1)
        // The cache is offered a response before its handlers run, so by now it has been asked.
        #expect(asked.current == 1)

        // The same handler is asked about the same response to a data request.
        asked.withValue { $0 = 0 }
        _ = await AF.request(server.url("/stream/1")).cacheResponse(using: cacher).serializingData().response
        #expect(asked.current == 1)
    }

    @Test func handlersOnSerialRequestAndSerializationQueuesSeeTheirEventsInOrder() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false,
                              requestQueue: DispatchQueue(label: "test.stream.requestQueue"),
                              serializationQueue: DispatchQueue(label: "test.stream.serializationQueue"))
        let order = Locked<[String]>([])
        let first = StreamLog<Line>("first", order: order)
        let second = StreamLog<Line>("second", order: order)

        session.streamRequest(server.url("/stream/1"))
            .responseStreamDecodable(of: Line.self) { first.record($0) }
            .responseStreamDecodable(of: Line.self) { second.record($0) }
            .resume()

        #expect(await waitUntil { first.isComplete && second.isComplete })
        let events = order.current
        #expect(events.filter { $0.hasPrefix("first") } == ["first stream", "first complete"])
        #expect(events.filter { $0.hasPrefix("second") } == ["second stream", "second complete"])
        #expect(try #require(events.firstIndex(of: "first stream")) < #require(events.firstIndex(of: "second stream")))
        #expect(first.values.current.count == 1 && second.values.current.count == 1)
    }

    @Test func concurrentRequestAndSerializationQueuesDeliverEveryHandler() async throws {
        let server = try await testServer()
        let session = Session(requestQueue: DispatchQueue(label: "test.stream.request", attributes: .concurrent),
                              serializationQueue: DispatchQueue(label: "test.stream.serialize", attributes: .concurrent))
        let first = StreamLog<Line>("first")
        let second = StreamLog<Line>("second")

        session.streamRequest(server.url("/stream/1"))
            .responseStreamDecodable(of: Line.self) { first.record($0) }
            .responseStreamDecodable(of: Line.self) { second.record($0) }

        #expect(await waitUntil { first.isComplete && second.isComplete })
        #expect(first.values.current.count == 1 && second.values.current.count == 1)
        #expect(first.completion.current?.response?.statusCode == 200)
        #expect(second.completion.current?.response?.statusCode == 200)
    }

    @Test func streamCanAuthenticate() async throws {
        let server = try await testServer()
        let log = StreamLog<Data>("data")

        AF.streamRequest(server.url("/basic-auth/userstream/password"))
            .authenticate(username: "userstream", password: "password")
            .responseStream { log.record($0) }

        #expect(await waitUntil { log.isComplete })
        #expect(!log.values.current.isEmpty)
        #expect(log.completion.current?.response?.statusCode == 200)
    }

    /// Counts `didParseStream` events.
    private final class ParseCounter: EventMonitor, Sendable {
        let queue = DispatchQueue(label: "test.stream.parseCounter")
        let parsed = Locked(0)

        func request<Value>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
            parsed.withValue { $0 += 1 }
        }
    }

    /// `validate()` is two validations (status code and content type), each reported once; task
    /// metrics, data and cache events are URLSession delegate events Lupine does not send.
    @Test func streamSendsItsLifetimeEvents() async throws {
        let server = try await testServer()
        let names = Locked<[String]>([])
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "test.stream.events"))
        func note(_ name: String) { names.withValue { $0.append(name) } }
        monitor.requestDidCreateInitialURLRequest = { _, _ in note("didCreateInitialURLRequest") }
        monitor.requestDidCreateTask = { _, _ in note("didCreateTask") }
        monitor.requestDidCompleteTaskWithError = { _, _, _ in note("didComplete") }
        monitor.requestDidFinish = { _ in note("didFinish") }
        monitor.requestDidResume = { _ in note("didResume") }
        monitor.requestDidResumeTask = { _, _ in note("didResumeTask") }
        monitor.requestDidValidateRequestResponseWithResult = { _, _, _, _ in note("didValidate") }
        let counter = ParseCounter()
        let session = Session(eventMonitors: [monitor, counter])
        let decoded = StreamLog<Line>("decoded")

        let request = session.streamRequest(server.url("/stream/1")).validate()
            .responseStreamDecodable(of: Line.self) { decoded.record($0) }

        #expect(await waitUntil { decoded.isComplete })
        #expect(await waitUntil { names.current.contains("didFinish") && counter.parsed.current >= 1 })
        let seen = names.current
        for name in ["didCreateInitialURLRequest", "didCreateTask", "didComplete", "didFinish", "didResume",
                     "didResumeTask"] {
            #expect(seen.filter { $0 == name }.count == 1, "\(name) in \(seen)")
        }
        #expect(seen.filter { $0 == "didValidate" }.count == 2, "\(seen)")
        #expect(counter.parsed.current == 1)
        #expect(request.state == .finished)
    }
}
