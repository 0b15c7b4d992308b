import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// The events of EventMonitor as a Session and its requests deliver them: which, in what order,
/// on which queue, to whom; and the Notifications of AlamofireNotifications.
@Suite struct EventMonitorTests {
    /// A URLRequestConvertible that cannot build its URLRequest.
    struct UnbuildableRequest: URLRequestConvertible {
        struct Unbuildable: Error {}
        func asURLRequest() throws -> URLRequest { throw Unbuildable() }
    }

    @Test func adaptedRetriedValidatedRequestReportsEveryEventInAlamofiresOrder() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor()
        let attempts = Locked(0)
        // The first attempt is pointed at a 500, which fails validation; the retrier retries once.
        let adapter = Adapter { request, _, completion in
            var request = request
            if attempts.increment() == 1 { request.url = URL(string: server.url("/status/500")) }
            completion(.success(request))
        }
        let retrier = Retrier { request, _, _, completion in
            completion(request.retryCount == 0 ? .retry : .doNotRetry)
        }
        let session = Session(eventMonitors: [monitor])
        let request = session.request(server.url("/get"), interceptor: Interceptor(adapter: adapter, retrier: retrier))
        let response = await request.validate().serializingData().response
        #expect(response.error == nil)
        #expect(await waitUntil { monitor.names.contains("didParseResponse<Value>") })

        let attempt = ["didCreateInitialURLRequest", "didAdaptInitialRequest", "didCreateURLRequest",
                       "requestDidResumeExchange", "didSendURLRequest"]
        let expected = ["requestDidResume"]
            + attempt + ["didReceiveResponse(500)", "didValidateRequest(failure)", "didCompleteAttempt(nil)"]
            + ["requestIsRetrying"]
            + attempt + ["didReceiveResponse(200)", "didValidateRequest(success)", "didValidateRequest(success)",
                         "didCompleteAttempt(nil)"]
            + ["requestDidFinish", "didParseResponse<Value>"]
        #expect(monitor.names == expected)
        #expect(monitor.events.allSatisfy { $0.requestID == request.id })
        withExtendedLifetime(session) {}
    }

    @Test func eventsCarryTheURLRequestsOfEachStep() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor()
        let adapter = Adapter { request, _, completion in
            var request = request
            request.setValue("adapted", forHTTPHeaderField: "X-Step")
            completion(.success(request))
        }
        let session = Session(eventMonitors: [monitor])
        let request = session.request(server.url("/get"), interceptor: adapter)
        _ = await request.serializingData().response
        #expect(await waitUntil { monitor.names.contains("didParseResponse<Value>") })
        let created = monitor.events.first { $0.name == "didCreateURLRequest" }?.urlRequest
        let sent = monitor.events.first { $0.name == "didSendURLRequest" }?.urlRequest
        #expect(created?.value(forHTTPHeaderField: "X-Step") == "adapted")
        #expect(sent?.url == request.performedRequests.last?.url)
        #expect(monitor.timelines.last?.requestCompletedTime != nil)
        withExtendedLifetime(session) {}
    }

    @Test func redirectHopsAreSentWithinOneExchange() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(server.url("/redirect/2")).serializingData().response
        #expect(await waitUntil { monitor.names.contains("didParseResponse<Value>") })
        #expect(monitor.names.filter { $0 == "didSendURLRequest" }.count == 3)
        #expect(monitor.names.filter { $0 == "requestDidResumeExchange" }.count == 1)
        #expect(monitor.names.filter { $0.hasPrefix("didReceiveResponse") } == ["didReceiveResponse(200)"])
        #expect(monitor.names.filter { $0.hasPrefix("didCompleteAttempt") } == ["didCompleteAttempt(nil)"])
        withExtendedLifetime(session) {}
    }

    @Test func unserializedResponseReportsTheNonGenericParseEvent() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            session.request(server.url("/get")).response { _ in continuation.resume() }
        }
        #expect(await waitUntil { monitor.names.contains("didParseResponse(Data?)") })
        #expect(!monitor.names.contains("didParseResponse<Value>"))
        withExtendedLifetime(session) {}
    }

    @Test func failuresBeforeTheExchangeAreReported() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(UnbuildableRequest()).serializingData().response
        struct Refused: Error {}
        let refusing = Adapter { _, _, completion in completion(.failure(Refused())) }
        _ = await session.request(server.url("/get"), interceptor: refusing).serializingData().response
        #expect(await waitUntil { monitor.names.filter { $0 == "requestDidFinish" }.count == 2 })
        #expect(monitor.names.contains("didFailToCreateURLRequest"))
        #expect(monitor.names.contains("didFailToAdaptURLRequest"))
        #expect(!monitor.names.contains("didSendURLRequest"))
        withExtendedLifetime(session) {}
    }

    @Test func eventsArriveOnTheMonitorsQueue() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor(queue: DispatchQueue(label: "test.monitor.own"))
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(server.url("/get")).validate().serializingData().response
        #expect(await waitUntil { monitor.names.contains("didParseResponse<Value>") })
        #expect(monitor.events.count > 5)
        #expect(monitor.events.allSatisfy { $0.onMonitorQueue })
        withExtendedLifetime(session) {}
    }

    #if !canImport(Darwin)
    @Test func monitorWithTheDefaultQueueIsNotCalledOnTheMainQueueOnLinux() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor(queue: nil)
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(server.url("/get")).serializingData().response
        #expect(await waitUntil { monitor.names.contains("didParseResponse<Value>") })
        #expect(monitor.events.allSatisfy { !$0.onMainThread })
        withExtendedLifetime(session) {}
    }
    #endif

    @Test func requestLevelMonitorReceivesOnlyItsRequestsEvents() async throws {
        let server = try await testServer()
        let sessionMonitor = RecordingMonitor()
        let requestMonitor = RecordingMonitor()
        let session = Session(eventMonitors: [sessionMonitor])
        let monitored = session.request(server.url("/get")).eventMonitor(requestMonitor)
        let other = session.request(server.url("/json"))
        async let first = monitored.serializingData().response
        async let second = other.serializingData().response
        _ = await (first, second)
        #expect(await waitUntil { sessionMonitor.names.filter { $0 == "didParseResponse<Value>" }.count == 2 })
        #expect(await waitUntil { requestMonitor.names.contains("didParseResponse<Value>") })
        #expect(requestMonitor.events.allSatisfy { $0.requestID == monitored.id })
        #expect(requestMonitor.names.contains("requestDidFinish"))
        #expect(Set(sessionMonitor.events.map(\.requestID)) == [monitored.id, other.id])
        withExtendedLifetime(session) {}
    }

    @Test func suspendResumeAndCancelOfARunningExchangeAreReported() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        let request = session.request(server.url("/delay/10"))
        request.resume()
        #expect(await waitUntil { monitor.names.contains("didSendURLRequest") })
        request.suspend()
        request.resume()
        request.cancel()
        _ = await request.serializingData().response
        #expect(await waitUntil { monitor.names.contains("didParseResponse<Value>") })
        let tail = Array(monitor.names.drop { $0 != "requestDidSuspend" })
        #expect(tail == ["requestDidSuspend", "requestDidSuspendExchange", "requestDidResume", "requestDidResumeExchange",
                         "requestDidCancel", "requestDidCancelExchange", "didCompleteAttempt(error)",
                         "requestDidFinish", "didParseResponse<Value>"])
        withExtendedLifetime(session) {}
    }

    @Test func suspendingARequestThatHasNotStartedReportsNoExchangeEvent() async throws {
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        let request = session.request("http://127.0.0.1:9/never")
        request.suspend()
        request.cancel()
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        #expect(monitor.names == ["requestDidSuspend", "requestDidCancel", "requestDidFinish"])
        withExtendedLifetime(session) {}
    }

    // MARK: Notifications

    /// Observes every Request notification about `request`, in the order posted.
    private func observeNotifications(about request: Request)
        -> (names: Locked<[Notification.Name]>, observers: [any NSObjectProtocol]) {
        let names = Locked<[Notification.Name]>([])
        let all = [Request.didResumeNotification, Request.didSuspendNotification, Request.didCancelNotification,
                   Request.didFinishNotification, Request.didResumeTaskNotification, Request.didSuspendTaskNotification,
                   Request.didCancelTaskNotification, Request.didCompleteTaskNotification]
        let observers = all.map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                if note.request === request { names.withValue { $0.append(note.name) } }
            }
        }
        return (names, observers)
    }

    @Test func notificationsOfARequestCarryItAndFollowItsExchange() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/get"))
        let (names, observers) = observeNotifications(about: request)
        defer { observers.forEach { NotificationCenter.default.removeObserver($0) } }
        _ = await request.serializingData().response
        #expect(await waitUntil { names.current.contains(Request.didFinishNotification) })
        #expect(names.current == [Request.didResumeNotification, Request.didResumeTaskNotification,
                                  Request.didCompleteTaskNotification, Request.didFinishNotification])
        withExtendedLifetime(session) {}
    }

    @Test func taskNotificationsFollowSuspendResumeAndCancelOfTheExchange() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/delay/10"))
        let (names, observers) = observeNotifications(about: request)
        defer { observers.forEach { NotificationCenter.default.removeObserver($0) } }
        request.resume()
        #expect(await waitUntil { names.current.contains(Request.didResumeTaskNotification) })
        request.suspend()
        request.resume()
        request.cancel()
        _ = await request.serializingData().response
        #expect(await waitUntil { names.current.contains(Request.didFinishNotification) })
        #expect(names.current == [Request.didResumeNotification, Request.didResumeTaskNotification,
                                  Request.didSuspendNotification, Request.didSuspendTaskNotification,
                                  Request.didResumeNotification, Request.didResumeTaskNotification,
                                  Request.didCancelNotification, Request.didCancelTaskNotification,
                                  Request.didCompleteTaskNotification, Request.didFinishNotification])
        withExtendedLifetime(session) {}
    }

    /// Notifications are posted after the root-queue work that raised them: with many requests
    /// in flight on one Session, each request's still come in its order, each once.
    @Test func notificationsOfConcurrentRequestsKeepEachRequestsOrder() async throws {
        let server = try await testServer()
        let session = Session()
        let requests = (0..<32).map { _ in session.request(server.url("/get")) }
        let identifiers = Set(requests.map(\.id))
        let seen = Locked<[UUID: [Notification.Name]]>([:])
        let names = [Request.didResumeNotification, Request.didResumeTaskNotification,
                     Request.didCompleteTaskNotification, Request.didFinishNotification]
        let observers = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard let request = note.request, identifiers.contains(request.id) else { return }
                seen.withValue { $0[request.id, default: []].append(note.name) }
            }
        }
        defer { observers.forEach { NotificationCenter.default.removeObserver($0) } }
        await withTaskGroup(of: Void.self) { group in
            for request in requests {
                group.addTask { _ = await request.serializingData().response }
            }
        }
        #expect(await waitUntil { seen.current.values.filter { $0.last == Request.didFinishNotification }.count == 32 })
        #expect(seen.current.count == 32)
        #expect(seen.current.values.allSatisfy { $0 == names })
        withExtendedLifetime(session) {}
    }

    /// Each request's notifications carry a userInfo of their own that holds that request alone
    /// (it is copied from one template per process, which must never keep a request).
    @Test func notificationUserInfoHoldsItsRequestAlone() async throws {
        let server = try await testServer()
        let session = Session()
        let requests = (0..<3).map { _ in session.request(server.url("/get")) }
        let identifiers = Set(requests.map(\.id))
        let seen = Locked<[(id: UUID, count: Int)]>([])
        let observer = NotificationCenter.default.addObserver(forName: Request.didFinishNotification, object: nil, queue: nil) { note in
            guard let request = note.request, identifiers.contains(request.id) else { return }
            seen.withValue { $0.append((request.id, note.userInfo?.count ?? 0)) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        for request in requests {
            _ = await request.serializingData().response
        }
        #expect(await waitUntil { seen.current.count == 3 })
        #expect(Set(seen.current.map(\.id)) == identifiers)
        #expect(seen.current.allSatisfy { $0.count == 1 })
        withExtendedLifetime(session) {}
    }
}
