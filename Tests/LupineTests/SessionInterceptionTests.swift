import Foundation
import Lupine
import LupineTestServer
import Testing

/// How a Session runs adapters and retriers across attempts and response serializers: the counts
/// and errors Alamofire's own Session tests expect.
@Suite struct SessionInterceptionTests {
    /// Counts adapt and retry calls; fails or retries as configured.
    final class CountingHandler: RequestInterceptor, @unchecked Sendable {
        struct Counts {
            var adaptCalls = 0
            var adapted = 0
            var retryCalls = 0
            var retries = 0
            var failNextAdaptAfterFirstSuccess = false
            var failFirstAdapt = false
        }

        private let counts: Locked<Counts>
        /// Requests adapted after the first adapt call get a Basic Authorization for /basic-auth/user/password.
        let authorizesLaterAttempts: Bool
        /// Every retry call answers `.doNotRetryWithError(RetryRefused(call:))`.
        let refusesWithError: Bool
        let retries: Bool
        let retryDelay: TimeInterval?

        struct AdaptFailure: Error, Equatable { let call: Int }
        struct RetryRefused: Error, Equatable { let call: Int }

        init(failFirstAdapt: Bool = false, failSecondAdapt: Bool = false, authorizesLaterAttempts: Bool = false,
             refusesWithError: Bool = false, retries: Bool = true, retryDelay: TimeInterval? = nil) {
            counts = Locked(Counts(failNextAdaptAfterFirstSuccess: failSecondAdapt, failFirstAdapt: failFirstAdapt))
            self.authorizesLaterAttempts = authorizesLaterAttempts
            self.refusesWithError = refusesWithError
            self.retries = retries
            self.retryDelay = retryDelay
        }

        var current: Counts { counts.current }

        func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState,
                   completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            let result = counts.withValue { counts -> Result<URLRequest, any Error> in
                counts.adaptCalls += 1
                if counts.failFirstAdapt {
                    counts.failFirstAdapt = false
                    return .failure(AdaptFailure(call: counts.adaptCalls))
                }
                if counts.failNextAdaptAfterFirstSuccess, counts.adapted == 1 {
                    counts.failNextAdaptAfterFirstSuccess = false
                    return .failure(AdaptFailure(call: counts.adaptCalls))
                }
                counts.adapted += 1
                var urlRequest = urlRequest
                if authorizesLaterAttempts, counts.adaptCalls > 1 {
                    urlRequest.headers.update(.authorization(username: "user", password: "password"))
                }
                return .success(urlRequest)
            }
            completion(result)
        }

        func retry(_ request: Request, for session: Session, dueTo error: any Error,
                   completion: @escaping @Sendable (RetryResult) -> Void) {
            let result = counts.withValue { counts -> RetryResult in
                counts.retryCalls += 1
                if refusesWithError { return .doNotRetryWithError(RetryRefused(call: counts.retryCalls)) }
                guard retries else { return .doNotRetry }
                counts.retries += 1
                guard counts.retries < 2 else { return .doNotRetry }
                return retryDelay.map { .retryWithDelay($0) } ?? .retry
            }
            completion(result)
        }
    }

    struct Authenticated: Decodable, Sendable { let authenticated: Bool }

    /// The responses of `count` `responseDecodable` handlers added to `request`, in order of completion.
    static func decodedResponses(of request: DataRequest, handlers count: Int) async -> [AFDataResponse<Authenticated>] {
        let responses = Locked<[AFDataResponse<Authenticated>]>([])
        for _ in 0..<count {
            request.responseDecodable(of: Authenticated.self) { response in responses.withValue { $0.append(response) } }
        }
        _ = await waitUntil { responses.current.count == count }
        return responses.current
    }

    /// The number of requests the Session still tracks, once it has settled.
    static func settlesWithNoActiveRequests(_ session: Session) async -> Bool {
        await waitUntil {
            let semaphore = DispatchSemaphore(value: 0)
            let count = Locked(-1)
            session.withAllRequests { requests in count.withValue { $0 = requests.count }; semaphore.signal() }
            semaphore.wait()
            return count.current == 0
        }
    }

    // MARK: A failed request asks the retriers again from its serializer

    @Test func requestRetrierIsAskedByEachAttemptAndAgainByTheFailingSerializer() async throws {
        let server = try await testServer()
        let handler = CountingHandler()
        let session = Session()
        let request = session.request(server.url("/basic-auth/user/password"), interceptor: handler).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 1)
        // Two attempts (the second one refused), then the serializer's failure asks once more.
        #expect(handler.current.adaptCalls == 2)
        #expect(handler.current.adapted == 2)
        #expect(handler.current.retryCalls == 3)
        #expect(handler.current.retries == 3)
        #expect(request.retryCount == 1)
        #expect(responses.first?.error?.isResponseValidationError == true)
        #expect(await Self.settlesWithNoActiveRequests(session))
    }

    @Test func sessionRetrierIsAskedBeforeTheRequestRetrier() async throws {
        let server = try await testServer()
        let sessionHandler = CountingHandler()
        let requestHandler = CountingHandler()
        let session = Session(interceptor: sessionHandler)
        let request = session.request(server.url("/basic-auth/user/password"), interceptor: requestHandler).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 1)
        #expect(sessionHandler.current.adaptCalls == 3)
        #expect(sessionHandler.current.retryCalls == 4)
        #expect(requestHandler.current.adaptCalls == 3)
        #expect(requestHandler.current.retryCalls == 3)
        #expect(request.retryCount == 2)
        #expect(responses.first?.error != nil)
        #expect(await Self.settlesWithNoActiveRequests(session))
    }

    @Test func retrierErrorOfTheSerializersCallReplacesTheResult() async throws {
        let server = try await testServer()
        let handler = CountingHandler(refusesWithError: true)
        let session = Session(interceptor: handler)
        let request = session.request(server.url("/basic-auth/user/password")).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 1)
        #expect(handler.current.adaptCalls == 1)
        #expect(handler.current.retryCalls == 2)
        #expect(request.retryCount == 0)
        let error = try #require(responses.first?.error)
        #expect(error.isRequestRetryError)
        #expect(error.underlyingError as? CountingHandler.RetryRefused == .init(call: 2))
        #expect(await Self.settlesWithNoActiveRequests(session))
    }

    @Test func adapterFailureOnRetryIsTheErrorOfEveryHandler() async throws {
        let server = try await testServer()
        let handler = CountingHandler(failSecondAdapt: true)
        let session = Session(interceptor: handler)
        let request = session.request(server.url("/basic-auth/user/password")).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 1)
        #expect(handler.current.adaptCalls == 2)
        #expect(handler.current.adapted == 1)
        #expect(handler.current.retryCalls == 3)
        #expect(request.retryCount == 1)
        #expect(request.error?.isRequestAdaptationError == true)
        #expect(request.error?.underlyingError as? CountingHandler.AdaptFailure == .init(call: 2))
        #expect(responses.first?.error?.isRequestAdaptationError == true)
        #expect(await Self.settlesWithNoActiveRequests(session))
    }

    @Test func retryWithDelayCountsLikeAnImmediateRetry() async throws {
        let server = try await testServer()
        let handler = CountingHandler(failSecondAdapt: true, retryDelay: 0.01)
        let session = Session(interceptor: handler)
        let request = session.request(server.url("/basic-auth/user/password")).validate()
        _ = await Self.decodedResponses(of: request, handlers: 1)
        #expect(handler.current.adaptCalls == 2)
        #expect(handler.current.retryCalls == 3)
        #expect(request.retryCount == 1)
        #expect(request.error?.isRequestAdaptationError == true)
    }

    @Test func adapterRunsAgainForTheRetriedAttempt() async throws {
        let server = try await testServer()
        let handler = CountingHandler(authorizesLaterAttempts: true)
        let session = Session(interceptor: handler)
        let request = session.request(server.url("/basic-auth/user/password")).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 1)
        #expect(handler.current.adaptCalls == 2)
        #expect(handler.current.retryCalls == 1)
        #expect(request.retryCount == 1)
        #expect(responses.first?.value?.authenticated == true)
        // One task and one performed request per attempt, in order; initial and adapted requests of both.
        #expect(request.tasks.count == 2)
        #expect(request.firstTask === request.tasks.first)
        #expect(request.lastTask === request.tasks.last)
        #expect(request.task === request.lastTask)
        #expect(request.tasks.first?.state == .completed)
        #expect(request.requests.count == 4)
        #expect(request.performedRequests.map { $0.value(forHTTPHeaderField: "Authorization") != nil } == [false, true])
        #expect(await Self.settlesWithNoActiveRequests(session))
    }

    // MARK: An adapter's failure on the first attempt is retried

    @Test func adaptFailureOfTheFirstAttemptIsRetriedForEachRequestKind() async throws {
        let server = try await testServer()
        let url = server.url("/basic-auth/user/password")
        let session = Session()

        let dataHandler = CountingHandler(failFirstAdapt: true, authorizesLaterAttempts: true)
        let data = await session.request(url, interceptor: dataHandler).validate()
            .serializingDecodable(Authenticated.self).response
        #expect(data.error == nil)

        let downloadHandler = CountingHandler(failFirstAdapt: true, authorizesLaterAttempts: true)
        let download = await session.download(url, interceptor: downloadHandler).validate()
            .serializingDecodable(Authenticated.self).response
        if let file = download.fileURL { try? FileManager.default.removeItem(at: file) }
        #expect(download.error == nil)

        let uploadHandler = CountingHandler(failFirstAdapt: true)
        let upload = await session.upload(Data("upload data".utf8), to: server.url("/post"), interceptor: uploadHandler)
            .validate().serializingData().response
        #expect(upload.error == nil)

        for handler in [dataHandler, downloadHandler, uploadHandler] {
            #expect(handler.current.adaptCalls == 2)
            #expect(handler.current.adapted == 1)
            #expect(handler.current.retryCalls == 1)
        }
        #expect(await Self.settlesWithNoActiveRequests(session))
    }

    // MARK: Serializer failures of a successful transfer

    @Test func serializerFailureAsksTheRetrierOnce() async throws {
        let server = try await testServer()
        let handler = CountingHandler(retries: false)
        let session = Session()
        let request = session.request(server.url("/html"), interceptor: handler).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 1)
        #expect(handler.current.adaptCalls == 1)
        #expect(handler.current.retryCalls == 1)
        #expect(request.retryCount == 0)
        #expect(responses.first?.error?.isResponseSerializationError == true)
        #expect(responses.first?.error?.underlyingError is DecodingError)
    }

    @Test func everyFailingSerializerAsksTheRetrierAndGetsItsOwnRetryError() async throws {
        let server = try await testServer()
        let handler = CountingHandler(refusesWithError: true)
        let session = Session()
        let request = session.request(server.url("/html"), interceptor: handler).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 2)
        #expect(handler.current.retryCalls == 2)
        #expect(request.retryCount == 0)
        #expect(responses.count == 2)
        for (index, response) in responses.enumerated() {
            guard case let .requestRetryFailed(retryError, originalError)? = response.error else {
                Issue.record("expected requestRetryFailed, got \(String(describing: response.error))")
                continue
            }
            #expect(retryError as? CountingHandler.RetryRefused == .init(call: index + 1))
            #expect(originalError.asAFError?.underlyingError is DecodingError)
        }
    }

    @Test func serializerRequestingARetryRunsEveryHandlerOnTheNextOutcome() async throws {
        let server = try await testServer()
        let handler = CountingHandler()
        let session = Session()
        let request = session.request(server.url("/html"), interceptor: handler).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 2)
        #expect(handler.current.adaptCalls == 2)
        #expect(handler.current.retryCalls == 3)
        #expect(request.retryCount == 1)
        #expect(responses.count == 2)
        for response in responses {
            #expect(response.error?.isResponseSerializationError == true)
            #expect(response.error?.underlyingError is DecodingError)
        }
        #expect(await Self.settlesWithNoActiveRequests(session))
    }

    @Test func adapterFailingDuringASerializerRetryCompletesEveryHandler() async throws {
        let server = try await testServer()
        // 1: first serializer's failure (retry); 2: the adapt failure; 3 and 4: both serializers.
        let handler = CountingHandler(failSecondAdapt: true)
        let session = Session()
        let request = session.request(server.url("/html"), interceptor: handler).validate()
        let responses = await Self.decodedResponses(of: request, handlers: 2)
        #expect(handler.current.adaptCalls == 2)
        #expect(handler.current.adapted == 1)
        #expect(handler.current.retryCalls == 4)
        #expect(request.retryCount == 1)
        #expect(responses.count == 2)
        for response in responses {
            #expect(response.error?.isRequestAdaptationError == true)
            #expect(response.error?.underlyingError as? CountingHandler.AdaptFailure == .init(call: 2))
        }
        #expect(await Self.settlesWithNoActiveRequests(session))
    }

    @Test func adapterFailingDuringASerializerRetryCompletesEveryDownloadHandler() async throws {
        let server = try await testServer()
        let handler = CountingHandler(failSecondAdapt: true)
        let session = Session()
        // The first attempt's file stays where it was moved (as in Alamofire): a directory of the
        // test's own, removed at the end, receives it.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-session-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination: DownloadRequest.Destination = { _, _ in
            (directory.appendingPathComponent("download.html"), [.createIntermediateDirectories, .removePreviousFile])
        }
        let request = session.download(server.url("/html"), interceptor: handler, to: destination).validate()
        let responses = Locked<[AFDownloadResponse<Authenticated>]>([])
        for _ in 0..<2 {
            request.responseDecodable(of: Authenticated.self) { response in responses.withValue { $0.append(response) } }
        }
        #expect(await waitUntil { responses.current.count == 2 })
        #expect(handler.current.adaptCalls == 2)
        #expect(handler.current.retryCalls == 4)
        #expect(request.retryCount == 1)
        for response in responses.current {
            #expect(response.error?.isRequestAdaptationError == true)
        }
    }

    // MARK: Cancelling inside a completion

    @Test func cancellingInsideTheCompletionCallsItOnceAndAsksNoRetrier() async throws {
        let server = try await testServer()
        let handler = CountingHandler()
        let session = Session()
        let request = session.request(server.url("/get"), interceptor: handler)
        request.validate()
        let calls = Locked<[Bool]>([])
        request.responseDecodable(of: HTTPBinResponse.self) { response in
            request.cancel()
            calls.withValue { $0.append(response.error == nil) }
        }
        #expect(await waitUntil { !calls.current.isEmpty })
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(calls.current == [true])
        #expect(handler.current.adaptCalls == 1)
        #expect(handler.current.retryCalls == 0)
        #expect(request.retryCount == 0)
        #expect(await Self.settlesWithNoActiveRequests(session))
    }
}
