import Foundation
import Lupine
import LupineTestServer
import Testing

/// Session lifetime, request tracking and cURL descriptions.
@Suite struct SessionTests {
    @Test func defaultSessionIsAF() {
        #expect(AF === Session.default)
    }

    @Test func releasingTheSessionFinishesItsRequestsWithSessionDeinitialized() async throws {
        let server = try await testServer()
        var session: Session? = Session()
        let request = try #require(session).request(server.url("/delay/30"))
        let task = request.serializingData()
        try await Task.sleep(nanoseconds: 200_000_000)
        session = nil
        let started = Date()
        let response = await task.response
        #expect(response.error?.isSessionDeinitializedError == true)
        // Long before the server's answer (30 s), with room for a loaded machine.
        #expect(Date().timeIntervalSince(started) < 15)
    }

    @Test func requestOfAReleasedSessionThatNeverStartedStillCompletes() async throws {
        let server = try await testServer()
        var session: Session? = Session(startRequestsImmediately: false)
        let request = try #require(session).request(server.url("/get"))
        session = nil
        request.resume()
        let response = await request.serializingData().response
        #expect(response.error?.isSessionDeinitializedError == true)
    }

    @Test func manySessionsCreatedAndReleasedLeaveTheProcessWorking() async throws {
        let server = try await testServer()
        for _ in 0..<20 {
            let session = Session()
            let response = await session.request(server.url("/get")).serializingData().response
            #expect(response.response?.statusCode == 200)
        }
    }

    @Test func cancelAllRequestsCancelsEveryRequestInFlight() async throws {
        let server = try await testServer()
        let session = Session()
        let tasks = (0..<3).map { _ in session.request(server.url("/delay/10")).serializingData() }
        try await Task.sleep(nanoseconds: 200_000_000)
        await withCheckedContinuation { continuation in
            session.cancelAllRequests { continuation.resume() }
        }
        for task in tasks {
            #expect(await task.response.error?.isExplicitlyCancelledError == true)
        }
    }

    @Test func withAllRequestsSeesRequestsInFlightAndForgetsFinishedOnes() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/delay/1"))
        // Awaiting resumes the request at once: it is in flight from here on, for a second (a
        // sleep here left too little of a shorter delay on a loaded machine).
        let task = request.serializingData()
        let during = await withCheckedContinuation { continuation in
            session.withAllRequests { continuation.resume(returning: $0) }
        }
        #expect(during.contains(request))
        _ = await task.response
        #expect(await waitUntil {
            let semaphore = DispatchSemaphore(value: 0)
            let count = Locked(-1)
            session.withAllRequests { requests in count.withValue { $0 = requests.count }; semaphore.signal() }
            semaphore.wait()
            return count.current == 0
        })
    }

    @Test func cURLDescriptionListsMethodHeadersBodyAndURL() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.headers = ["X-Session": "s"]
        let session = Session(configuration: configuration)
        let request = session.request(server.url("/post"), method: .post,
                                      parameters: ["q": "a \"quoted\" value"], encoding: JSONEncoding.default,
                                      headers: ["X-Trace": "t"])
        _ = await request.serializingData().response
        let curl = request.cURLDescription()
        let lines = curl.components(separatedBy: " \\\n\t")
        #expect(lines.first == "$ curl -v")
        #expect(lines.contains("-X POST"))
        #expect(lines.contains("-H \"X-Session: s\""))
        #expect(lines.contains("-H \"X-Trace: t\""))
        #expect(lines.contains("-H \"Content-Type: application/json\""))
        #expect(lines.contains(#"-d "{\"q\":\"a \\\"quoted\\\" value\"}""#))
        #expect(lines.last == "\"\(server.url("/post"))\"")
    }

    @Test func cURLDescriptionBeforeAnyRequestSaysSo() {
        let request = Session(startRequestsImmediately: false).request("http://127.0.0.1:1/never")
        #expect(request.cURLDescription() == "$ curl command could not be created")
    }

    /// The cURL descriptions a `cURLDescription(calling:)` handler received, once the root queue
    /// has run what the request queued there.
    static func cURLCalls(_ calls: Locked<[String]>, settledOn session: Session) async -> [String] {
        await withCheckedContinuation { continuation in session.rootQueue.async { continuation.resume() } }
        return calls.current
    }

    @Test func cURLHandlerIsCalledOnceThoughTheRequestIsRetried() async throws {
        let server = try await testServer()
        let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
        let session = Session(interceptor: retrier)
        let calls = Locked<[String]>([])
        let request = session.request(server.url("/status/500"))
            .cURLDescription { description in calls.withValue { $0.append(description) } }
        _ = await request.validate().serializingData().response
        #expect(request.retryCount == 1)
        #expect(await Self.cURLCalls(calls, settledOn: session).count == 1)
    }

    @Test func cURLHandlerIsCalledWhenAdaptationFails() async throws {
        let server = try await testServer()
        let adapter = Adapter { _, _, completion in completion(.failure(AFError.invalidURL(url: ""))) }
        let session = Session(interceptor: adapter)
        let calls = Locked<[String]>([])
        let request = session.request(server.url("/get"))
            .cURLDescription { description in calls.withValue { $0.append(description) } }
        let response = await request.serializingData().response
        #expect(response.error?.isRequestAdaptationError == true)
        let received = await Self.cURLCalls(calls, settledOn: session)
        #expect(received.count == 1)
        #expect(received.first?.hasSuffix("\"\(server.url("/get"))\"") == true)
    }

    @Test func performedRequestCarriesTheSessionHeaders() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.headers.add(name: "X-Session", value: "yes")
        let session = Session(configuration: configuration)
        let request = session.request(server.url("/headers"))
        _ = await request.serializingData().response
        #expect(request.performedRequests.count == 1)
        #expect(request.performedRequests.first?.value(forHTTPHeaderField: "X-Session") == "yes")
        #expect(request.requests.first?.value(forHTTPHeaderField: "X-Session") == nil)
        // The task shows the request as sent too, and the server got the field.
        #expect(request.task?.currentRequest?.value(forHTTPHeaderField: "X-Session") == "yes")
        #expect(request.task?.originalRequest?.value(forHTTPHeaderField: "X-Session") == nil)
        #expect(Self.receivedHeaders(request.data)?["X-Session"] == "yes")
    }

    /// The engine keeps a connection's `Host` value after its first exchange: the requests that
    /// reuse the connection name the server as the first did.
    @Test func everyRequestOnAReusedConnectionNamesTheServerInHost() async throws {
        let server = try await testServer()
        let session = Session()
        for _ in 0..<3 {
            let received = Self.receivedHeaders(await session.request(server.url("/headers")).serializingData().response.data)
            #expect(received?.first { $0.key.lowercased() == "host" }?.value == "127.0.0.1:\(server.port)")
        }
    }

    /// The header fields `/headers` says it received.
    static func receivedHeaders(_ body: Data?) -> [String: String]? {
        guard let body, let json = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        return json["headers"] as? [String: String]
    }

    @Test func aRequestsOwnFieldWinsOverTheSessionsOfTheSameName() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.headers.add(name: "X-Session", value: "session")
        let session = Session(configuration: configuration)
        let request = session.request(server.url("/headers"), headers: ["x-session": "own"])
        let received = Self.receivedHeaders(await request.serializingData().response.data)
        #expect(received?.first { $0.key.lowercased() == "x-session" }?.value == "own")
        #expect(received?.count(where: { $0.key.lowercased() == "x-session" }) == 1)
        #expect(request.performedRequests.first?.value(forHTTPHeaderField: "X-Session") == "own")
    }
}

/// A Session released right after its last response: its engine shuts down while a connection may
/// still be handed back to its pool, which must not crash. The race needs load: eight workers
/// release sessions at once.
@Suite struct SessionReleaseTests {
    @Test func sessionsReleasedRightAfterTheirResponseDoNotCrashTheProcess() async throws {
        let server = try await testServer()
        let failures = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var failures = 0
                    for round in 0..<40 {
                        let session = Session()
                        let path = (worker + round).isMultiple(of: 2) ? "/bytes/64" : "/stream-bytes/70000"
                        let response = await session.request(server.url(path)).serializingData().response
                        let download = await session.download(server.url(path)).serializingData().response
                        if let file = download.fileURL { try? FileManager.default.removeItem(at: file) }
                        if response.error != nil || download.error != nil { failures += 1 }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}

/// The Session behaviour Alamofire's own Session tests pin down: requests that wait for
/// `resume()`, releasing a Session, invalid URLs, adapters at task creation, mass actions and the
/// configuration's headers.
@Suite struct SessionContractTests {
    /// The response of `request`'s `response` handler, or nil when none arrives in 30 s.
    static func response(of request: DataRequest) async -> AFDataResponse<Data?>? {
        let received = Locked<AFDataResponse<Data?>?>(nil)
        request.response { response in received.withValue { $0 = response } }
        _ = await waitUntil { received.current != nil }
        return received.current
    }

    /// Whether the task is absent or has ended as a cancelled URLSession task ends.
    static func taskIsGoneOrEnding(_ request: Request) -> Bool {
        guard let state = request.task?.state else { return true }
        return state == .canceling || state == .completed
    }

    // MARK: startRequestsImmediately

    @Test func requestWaitingForResumeRunsOnceResumed() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let received = Locked<AFDataResponse<Data?>?>(nil)
        session.request(URLRequest(url: try #require(URL(string: server.url("/get")))))
            .response { response in received.withValue { $0 = response } }
            .resume()
        #expect(await waitUntil { received.current != nil })
        #expect(received.current?.response?.statusCode == 200)
    }

    @Test func cancellingARequestThatNeverStartedStillCallsItsHandler() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let request = session.request(server.url("/get")).cancel()
        let response = await Self.response(of: request)
        #expect(response != nil)
        #expect(request.isCancelled)
        #expect(Self.taskIsGoneOrEnding(request))
        #expect(request.error?.isExplicitlyCancelledError == true)
    }

    @Test func resumingThenCancellingEndsCancelled() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let received = Locked<AFDataResponse<Data?>?>(nil)
        let request = session.request(server.url("/delay/10"))
            .response { response in received.withValue { $0 = response } }
            .resume()
            .cancel()
        #expect(await waitUntil { received.current != nil })
        #expect(request.isCancelled)
        #expect(Self.taskIsGoneOrEnding(request))
        #expect(received.current?.error?.isExplicitlyCancelledError == true)
    }

    @Test func resumingACancelledRequestLeavesItCancelled() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let received = Locked<AFDataResponse<Data?>?>(nil)
        let request = session.request(server.url("/get"))
            .response { response in received.withValue { $0 = response } }
            .cancel()
            .resume()
        #expect(await waitUntil { received.current != nil })
        #expect(request.isCancelled)
        #expect(Self.taskIsGoneOrEnding(request))
        #expect(received.current?.error?.isExplicitlyCancelledError == true)
    }

    // MARK: Releasing the Session

    @Test func releasingASessionWithManyPendingRequestsCompletesThemAndFreesIt() async throws {
        let server = try await testServer()
        let completed = Locked(0)
        var session: Session? = Session(startRequestsImmediately: false, requestSetup: .eager)
        let weakSession = WeakReference(try #require(session))
        let requests = (0..<100).map { _ in
            session?.request(server.url("/get")).response { _ in completed.increment() }
        }
        session = nil
        #expect(await waitUntil { completed.current == 100 })
        for request in requests {
            let state = request?.task?.state
            #expect(state == .canceling || state == .completed, "task state is \(String(describing: state))")
            #expect(request?.error?.isSessionDeinitializedError == true)
        }
        #expect(weakSession.isReleased)
    }

    @Test func releasingASessionKeepsACancelledRequestCancelled() async throws {
        let server = try await testServer()
        var session: Session? = Session(startRequestsImmediately: false)
        let request = session?.request(server.url("/get"))
        request?.cancel()
        session = nil
        #expect(request?.state == .cancelled)
    }

    // MARK: Invalid URLs

    @Test func anEmptyURLStringFailsEveryRequestKindWithInvalidURL() async throws {
        let session = Session()
        let dataResponse = await Self.response(of: session.request(""))
        let uploadData = await Self.response(of: session.upload(Data(), to: ""))
        let uploadFile = await Self.response(of: session.upload(URL(fileURLWithPath: "/invalid"), to: ""))
        let uploadStream = await Self.response(of: session.upload(InputStream(data: Data()), to: ""))
        for response in [dataResponse, uploadData, uploadFile, uploadStream] {
            #expect(response?.request == nil)
            #expect(response?.response == nil)
            #expect(response?.data == nil)
            #expect(response?.error?.isInvalidURLError == true)
            #expect(response?.error?.urlConvertible as? String == "")
        }
        let received = Locked<AFDownloadResponse<URL?>?>(nil)
        session.download("").response { response in received.withValue { $0 = response } }
        #expect(await waitUntil { received.current != nil })
        let download = received.current
        #expect(download?.request == nil)
        #expect(download?.response == nil)
        #expect(download?.fileURL == nil)
        #expect(download?.resumeData == nil)
        #expect(download?.error?.isInvalidURLError == true)
        #expect(download?.error?.urlConvertible as? String == "")
        let completion = Locked<DataStreamRequest.Completion?>(nil)
        session.streamRequest("").responseStream { stream in
            guard case let .complete(done) = stream.event else { return }
            completion.withValue { $0 = done }
        }
        #expect(await waitUntil { completion.current != nil })
        #expect(completion.current?.request == nil)
        #expect(completion.current?.error?.isInvalidURLError == true)
        #expect(completion.current?.error?.urlConvertible as? String == "")
    }

    static func isBodyDataInGETRequest(_ error: AFError?) -> Bool {
        guard case .urlRequestValidationFailed(reason: .bodyDataInGETRequest)? = error else { return false }
        return true
    }

    @Test func aGETRequestWithABodyIsRefused() async throws {
        let server = try await testServer()
        var urlRequest = URLRequest(url: try #require(URL(string: server.url("/get"))))
        urlRequest.httpBody = Data("invalid".utf8)
        let session = Session()
        let response = await session.request(urlRequest).serializingData().response
        withExtendedLifetime(session) {}
        #expect(response.value == nil)
        #expect(Self.isBodyDataInGETRequest(response.error))
    }

    @Test func anAdapterGivingAGETRequestABodyFailsAdaptation() async throws {
        let server = try await testServer()
        let adapter = Adapter { request, _, completion in
            var request = request
            request.httpBody = Data("invalid".utf8)
            completion(.success(request))
        }
        let session = Session(interceptor: adapter)
        let response = await session.request(server.url("/get")).serializingData().response
        withExtendedLifetime(session) {}
        #expect(response.error?.isRequestAdaptationError == true)
        #expect(Self.isBodyDataInGETRequest(response.error?.underlyingError?.asAFError))
    }

    // MARK: Adapters when a task is created

    /// Sets the method of every request it adapts, or fails with `AFError.invalidURL(url: "")`.
    final class MethodAdapter: RequestInterceptor {
        let method: HTTPMethod
        let fails: Bool
        let adaptCount = Locked(0)

        init(method: HTTPMethod, fails: Bool = false) {
            self.method = method
            self.fails = fails
        }

        func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState,
                   completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            adaptCount.increment()
            guard !fails else {
                completion(.failure(AFError.invalidURL(url: "")))
                return
            }
            var urlRequest = urlRequest
            urlRequest.method = method
            completion(.success(urlRequest))
        }
    }

    /// Adds `field: value` to every request it adapts.
    final class FieldAdapter: RequestInterceptor {
        let adaptCount = Locked(0)

        func adapt(_ urlRequest: URLRequest, using state: RequestAdapterState,
                   completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            adaptCount.increment()
            var urlRequest = urlRequest
            urlRequest.headers.add(name: "field", value: "value")
            completion(.success(urlRequest))
        }
    }

    enum Kind: CaseIterable { case data, download, uploadData, uploadFile, uploadStream }

    @Test(arguments: Kind.allCases)
    func sessionAndRequestAdaptersShapeTheTasksOriginalRequest(_ kind: Kind) async throws {
        let server = try await testServer()
        let isUpload = kind != .data && kind != .download
        let methodAdapter = MethodAdapter(method: isUpload ? .get : .post)
        let fieldAdapter = FieldAdapter()
        let monitor = ClosureEventMonitor()
        let tasksCreated = Locked(0)
        monitor.requestDidCreateTask = { _, _ in tasksCreated.increment() }
        let session = Session(startRequestsImmediately: false, requestSetup: .eager, interceptor: methodAdapter,
                              eventMonitors: [monitor])
        let url = server.url(isUpload ? "/post" : "/get")
        let make: ((any RequestInterceptor)?) -> Request = { interceptor in
            switch kind {
            case .data: return session.request(url, interceptor: interceptor)
            case .download: return session.download(url, interceptor: interceptor)
            case .uploadData: return session.upload(Data("data".utf8), to: url, interceptor: interceptor)
            case .uploadFile:
                return session.upload(URL(fileURLWithPath: "/path/to/some/file.txt"), to: url, interceptor: interceptor)
            case .uploadStream: return session.upload(InputStream(data: Data("data".utf8)), to: url, interceptor: interceptor)
            }
        }
        let first = make(nil)
        #expect(await waitUntil { tasksCreated.current == 1 })
        let second = make(fieldAdapter)
        #expect(await waitUntil { tasksCreated.current == 2 })
        #expect(first.task?.originalRequest?.httpMethod == methodAdapter.method.rawValue)
        #expect(second.task?.originalRequest?.httpMethod == methodAdapter.method.rawValue)
        #expect(second.task?.originalRequest?.allHTTPHeaderFields?.count == 1)
        #expect(methodAdapter.adaptCount.current == 2)
        #expect(fieldAdapter.adaptCount.current == 1)
        first.cancel()
        second.cancel()
    }

    @Test func aFailingSessionOrRequestAdapterGivesRequestAdaptationFailed() async throws {
        let server = try await testServer()
        let monitor = ClosureEventMonitor()
        let failures = Locked(0)
        monitor.requestDidFailToAdaptURLRequestWithError = { _, _, _ in failures.increment() }
        let session = Session(startRequestsImmediately: false, requestSetup: .eager,
                              interceptor: MethodAdapter(method: .post, fails: true), eventMonitors: [monitor])
        let first = session.request(server.url("/get"))
        #expect(await waitUntil { failures.current == 1 })
        let second = session.request(server.url("/get"), interceptor: MethodAdapter(method: .get, fails: true))
        #expect(await waitUntil { failures.current == 2 })
        for request in [first, second] {
            #expect(request.error?.isRequestAdaptationError == true)
            #expect(request.error?.underlyingError?.asAFError?.urlConvertible as? String == "")
        }
    }

    // MARK: Request state

    @Test func aRequestThatCompletedIsFinished() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/get"))
        let response = await Self.response(of: request)
        withExtendedLifetime(session) {}
        #expect(response?.error == nil)
        #expect(request.state == .finished)
    }

    @Test func aConcurrentRootQueueStillServesRequests() async throws {
        let server = try await testServer()
        let session = Session(rootQueue: DispatchQueue(label: "concurrent root", attributes: .concurrent))
        let response = await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).response
        #expect(response.value != nil)
    }

    // MARK: Mass actions

    @Test func withAllRequestsCanSuspendEveryRequest() async throws {
        let server = try await testServer()
        let monitor = ClosureEventMonitor()
        let created = Locked(0)
        monitor.requestDidCreateTask = { _, _ in created.increment() }
        let session = Session(requestSetup: .eager, eventMonitors: [monitor])
        let requests = (0..<10).map { _ in session.request(server.url("/delay/1")) }
        #expect(await waitUntil { created.current == 10 })
        await withCheckedContinuation { continuation in
            session.withAllRequests { requests in
                requests.forEach { $0.suspend() }
                continuation.resume()
            }
        }
        #expect(requests.allSatisfy { $0.isSuspended })
        requests.forEach { $0.cancel() }
    }

    enum Start: CaseIterable { case eagerAutomatic, lazyAutomatic, instanceAutomatic, eagerManual, lazyManualResumed }

    @Test(arguments: Start.allCases)
    func cancelAllRequestsCancelsEveryRequest(_ start: Start) async throws {
        let server = try await testServer()
        let count = 100
        let monitor = ClosureEventMonitor()
        let created = Locked(0)
        monitor.requestDidCreateTask = { _, _ in created.increment() }
        let session = switch start {
        case .eagerAutomatic: Session(requestSetup: .eager, eventMonitors: [monitor])
        case .lazyAutomatic: Session(eventMonitors: [monitor])
        case .instanceAutomatic, .eagerManual: Session(startRequestsImmediately: false, requestSetup: .eager, eventMonitors: [monitor])
        case .lazyManualResumed: Session(startRequestsImmediately: false, eventMonitors: [monitor])
        }
        // Long enough that no request ends by itself before the cancel, however slowly a loaded
        // machine creates the hundred (with one second, a run of over seven seconds failed).
        let url = server.url("/delay/10")
        let responses = Locked<[AFDataResponse<Data?>]>([])
        for _ in 0..<count {
            let request = session.request(url, shouldAutomaticallyResume: start == .instanceAutomatic ? true : nil)
            request.response { response in responses.withValue { $0.append(response) } }
            if start == .lazyManualResumed { request.resume() }
        }
        #expect(await waitUntil { created.current == count })
        await withCheckedContinuation { continuation in
            session.cancelAllRequests { continuation.resume() }
        }
        #expect(await waitUntil { responses.current.count == count })
        #expect(responses.current.allSatisfy { $0.error?.isExplicitlyCancelledError == true })
        #expect(await SessionInterceptionTests.settlesWithNoActiveRequests(session))
    }

    /// Alamofire's Session tracks a request once it performs it: a lazy request that was never
    /// resumed is not among `withAllRequests`, and `cancelAllRequests` leaves it to run later.
    @Test func cancelAllRequestsLeavesALazyRequestThatWasNeverResumed() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let waiting = session.request(server.url("/get"))
        let seen = await withCheckedContinuation { continuation in
            session.withAllRequests { continuation.resume(returning: $0) }
        }
        #expect(!seen.contains(waiting))
        await withCheckedContinuation { continuation in
            session.cancelAllRequests { continuation.resume() }
        }
        #expect(!waiting.isCancelled)
        let response = await Self.response(of: waiting.resume())
        #expect(response?.response?.statusCode == 200)
    }

    @Test func aRetriedRequestCanBeMassCancelled() async throws {
        let server = try await testServer()
        let hasRetried = Locked(false)
        let adapter = Adapter { request, _, completion in
            var request = request
            if hasRetried.current { request.url = URL(string: server.url("/delay/1")) }
            completion(.success(request))
        }
        let retrier = Retrier { _, _, _, completion in
            let retried = hasRetried.withValue { retried in defer { retried = true }; return retried }
            completion(retried ? .doNotRetry : .retry)
        }
        let queue = DispatchQueue(label: "retried request mass cancel")
        let monitor = ClosureEventMonitor(queue: queue)
        let session = Session(rootQueue: queue, interceptor: Interceptor(adapter: adapter, retrier: retrier),
                              eventMonitors: [monitor])
        let tasksCreated = Locked(0)
        let cancelled = Locked(false)
        monitor.requestDidCreateTask = { [unowned session] _, _ in
            // Cancelled once the second attempt's task exists.
            if tasksCreated.increment() == 2 { session.cancelAllRequests { cancelled.withValue { $0 = true } } }
        }
        let received = Locked<AFDataResponse<Data?>?>(nil)
        session.request(server.url("/status/401")).validate().response { response in received.withValue { $0 = response } }
        #expect(await waitUntil { received.current != nil && cancelled.current })
        #expect(tasksCreated.current == 2)
        #expect(received.current?.error?.isExplicitlyCancelledError == true)
        #expect(await SessionInterceptionTests.settlesWithNoActiveRequests(session))
    }

    // MARK: The configuration's headers

    @Test(arguments: [false, true])
    func theConfigurationsAuthorizationIsSent(ephemeral: Bool) async throws {
        let server = try await testServer()
        let configuration = ephemeral ? URLSessionConfiguration.ephemeral : URLSessionConfiguration.af.default
        var headers = HTTPHeaders.default
        headers["Authorization"] = "Bearer 123456"
        configuration.headers = headers
        let session = Session(configuration: configuration)
        let response = await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).response
        withExtendedLifetime(session) {}
        #expect(response.request != nil)
        #expect(response.response != nil)
        #expect(response.data != nil)
        #expect(response.value?.header("Authorization") == "Bearer 123456")
    }
}
