import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// ClosureEventMonitor calls the closure of each event, on its queue, and can be subclassed.
@Suite struct ClosureEventMonitorTests {
    @Test func closuresOfARequestsEventsAreCalledOnTheMonitorsQueue() async throws {
        let server = try await testServer()
        let queue = DispatchQueue(label: "test.closureMonitor")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let monitor = ClosureEventMonitor(queue: queue)
        let calls = Locked<[String]>([])
        let offQueue = Locked(0)
        let record: @Sendable (String) -> Void = { name in
            if DispatchQueue.getSpecific(key: key) != true { offQueue.increment() }
            calls.withValue { $0.append(name) }
        }
        monitor.requestDidResume = { _ in record("resume") }
        monitor.requestDidCreateInitialURLRequest = { _, _ in record("initial") }
        monitor.requestDidAdaptInitialRequestToAdaptedRequest = { _, _, _ in record("adapt") }
        monitor.requestDidCreateURLRequest = { _, _ in record("create") }
        monitor.requestDidResumeExchange = { _ in record("resumeExchange") }
        monitor.requestDidSendURLRequest = { _, urlRequest in record("send \(urlRequest.url?.path ?? "")") }
        monitor.requestDidReceiveResponse = { _, response in record("receive \(response.statusCode)") }
        monitor.requestDidValidateRequestResponseDataWithResult = { _, _, _, _, result in
            record((try? result.get()) == nil ? "validate failure" : "validate success")
        }
        monitor.requestDidCompleteAttemptWithError = { _, error, timeline in
            record("complete \(error == nil) \(timeline.requestCompletedTime != nil)")
        }
        monitor.requestIsRetrying = { _ in record("retry") }
        monitor.requestDidFinish = { _ in record("finish") }
        monitor.requestDidParseResponse = { _, response in record("parse \(response.response?.statusCode ?? 0)") }
        let adapter = Adapter { request, _, completion in completion(.success(request)) }
        let session = Session(eventMonitors: [monitor])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            session.request(server.url("/get"), interceptor: adapter)
                .validate(statusCode: 200..<300)
                .response { _ in continuation.resume() }
        }
        #expect(await waitUntil { calls.current.contains("parse 200") })
        #expect(calls.current == ["resume", "initial", "adapt", "create", "resumeExchange", "send /get", "receive 200",
                                  "validate success", "complete true true", "finish", "parse 200"])
        #expect(offQueue.current == 0)
        withExtendedLifetime(session) {}
    }

    @Test func failureRetryAndCancellationClosuresAreCalled() async throws {
        let server = try await testServer()
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "test.closureMonitor.failures"))
        let calls = Locked<[String]>([])
        monitor.requestDidFailToAdaptURLRequestWithError = { _, _, error in
            calls.withValue { $0.append("adaptFailed \(error.isRequestAdaptationError)") }
        }
        monitor.requestIsRetrying = { _ in calls.withValue { $0.append("retry") } }
        monitor.requestDidSuspend = { _ in calls.withValue { $0.append("suspend") } }
        monitor.requestDidSuspendExchange = { _ in calls.withValue { $0.append("suspendExchange") } }
        monitor.requestDidCancel = { _ in calls.withValue { $0.append("cancel") } }
        monitor.requestDidCancelExchange = { _ in calls.withValue { $0.append("cancelExchange") } }
        monitor.requestDidFailToCreateURLRequestWithError = { _, _ in calls.withValue { $0.append("createFailed") } }
        let session = Session(eventMonitors: [monitor])

        struct Refused: Error {}
        let refusing = Adapter { _, _, completion in completion(.failure(Refused())) }
        _ = await session.request(server.url("/get"), interceptor: refusing).serializingData().response
        _ = await session.request(EventMonitorTests.UnbuildableRequest()).serializingData().response
        let retryOnce = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
        _ = await session.request(server.url("/status/500"), interceptor: retryOnce).validate().serializingData().response
        let slow = session.request(server.url("/delay/10"))
        slow.resume()
        #expect(await waitUntil { slow.performedRequests.count == 1 })
        slow.suspend()
        slow.cancel()
        _ = await slow.serializingData().response

        #expect(await waitUntil { calls.current.contains("cancelExchange") })
        #expect(calls.current == ["adaptFailed true", "createFailed", "retry", "suspend", "suspendExchange",
                                  "cancel", "cancelExchange"])
        withExtendedLifetime(session) {}
    }

    #if !canImport(Darwin)
    @Test func defaultQueueIsTheSessionsQueueNotTheUndrainedMainQueueOnLinux() async throws {
        let server = try await testServer()
        let monitor = ClosureEventMonitor()
        let finishedOffMain = Locked<[Bool]>([])
        monitor.requestDidFinish = { _ in finishedOffMain.withValue { $0.append(!Thread.isMainThread) } }
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(server.url("/get")).serializingData().response
        #expect(await waitUntil { !finishedOffMain.current.isEmpty })
        #expect(finishedOffMain.current == [true])
        #expect(monitor.queue !== DispatchQueue.main)
        withExtendedLifetime(session) {}
    }
    #endif

    @Test func subclassOverridesAnEventAndKeepsTheOtherClosures() async throws {
        let server = try await testServer()
        let monitor = FinishCountingMonitor(queue: DispatchQueue(label: "test.closureMonitor.subclass"))
        let resumed = Locked(0)
        monitor.requestDidResume = { _ in resumed.increment() }
        monitor.requestDidFinish = { _ in Issue.record("the overriding method replaces the closure") }
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(server.url("/get")).serializingData().response
        #expect(await waitUntil { monitor.finished.current == 1 })
        #expect(resumed.current == 1)
        withExtendedLifetime(session) {}
    }
}

/// A subclass that counts finished requests in an override instead of a closure.
final class FinishCountingMonitor: ClosureEventMonitor, @unchecked Sendable {
    let finished = Locked(0)

    override func requestDidFinish(_ request: Request) {
        finished.increment()
    }
}
