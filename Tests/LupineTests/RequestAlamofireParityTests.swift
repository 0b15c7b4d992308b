import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Behaviour that Alamofire's RequestTests assert, over loopback.
@Suite struct RequestAlamofireParityTests {
    /// A `ClosureEventMonitor` counting the lifetime events Alamofire's tests count.
    private final class LifetimeCounts: Sendable {
        let monitor = ClosureEventMonitor()
        private let counts = Locked<[String: Int]>([:])

        init() {
            monitor.requestDidCreateInitialURLRequest = { [counts] _, _ in counts.withValue { $0["didCreateInitialURLRequest", default: 0] += 1 } }
            monitor.requestDidCreateTask = { [counts] _, _ in counts.withValue { $0["didCreateTask", default: 0] += 1 } }
            monitor.requestDidCompleteTaskWithError = { [counts] _, _, _ in counts.withValue { $0["didCompleteTask", default: 0] += 1 } }
            monitor.requestDidResume = { [counts] _ in counts.withValue { $0["didResume", default: 0] += 1 } }
            monitor.requestDidResumeTask = { [counts] _, _ in counts.withValue { $0["didResumeTask", default: 0] += 1 } }
            monitor.requestDidSuspend = { [counts] _ in counts.withValue { $0["didSuspend", default: 0] += 1 } }
            monitor.requestDidSuspendTask = { [counts] _, _ in counts.withValue { $0["didSuspendTask", default: 0] += 1 } }
            monitor.requestDidCancel = { [counts] _ in counts.withValue { $0["didCancel", default: 0] += 1 } }
            monitor.requestDidCancelTask = { [counts] _, _ in counts.withValue { $0["didCancelTask", default: 0] += 1 } }
            monitor.requestDidFinish = { [counts] _ in counts.withValue { $0["didFinish", default: 0] += 1 } }
            monitor.requestDidParseResponse = { [counts] _, _ in counts.withValue { $0["didParseResponse", default: 0] += 1 } }
        }

        var current: [String: Int] { counts.current }

        /// The counts of the named events only.
        func of(_ names: [String]) -> [String: Int] {
            current.filter { names.contains($0.key) }
        }
    }

    private static let controlEvents = ["didResume", "didResumeTask", "didSuspend", "didSuspendTask", "didCancel",
                                        "didCancelTask", "didFinish"]

    private static func once(_ names: [String]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: names.map { ($0, 1) })
    }

    private static func response(of request: DataRequest) async -> DataResponse<Data?, AFError> {
        await withCheckedContinuation { continuation in
            request.response { continuation.resume(returning: $0) }
        }
    }

    // MARK: Resuming, suspending and cancelling many times

    @Test(arguments: [(true, true), (false, true), (false, false)])
    func resumingManyTimesSendsEachResumeEventOnce(startsImmediately: Bool, addsHandler: Bool) async throws {
        let server = try await testServer()
        let counts = LifetimeCounts()
        let session = Session(startRequestsImmediately: startsImmediately, eventMonitors: [counts.monitor])
        let handled = Locked(0)
        let request = session.request(server.url("/get"))
        if addsHandler {
            request.response { _ in handled.withValue { $0 += 1 } }
        }
        for _ in 0..<100 {
            request.resume()
        }

        #expect(await waitUntil { counts.current["didFinish"] == 1 && handled.current == (addsHandler ? 1 : 0) })
        #expect(counts.of(Self.controlEvents) == Self.once(["didResume", "didResumeTask", "didFinish"]))
        #expect(request.state == .finished)
        withExtendedLifetime(session) {}
    }

    @Test func suspendingAnEagerlySetUpRequestManyTimesSuspendsItAndItsTaskOnce() async throws {
        let server = try await testServer()
        let counts = LifetimeCounts()
        let session = Session(startRequestsImmediately: false, requestSetup: .eager, eventMonitors: [counts.monitor])
        let request = session.request(server.url("/get"))
        for _ in 0..<100 {
            request.suspend()
        }

        #expect(await waitUntil { counts.current["didSuspendTask"] == 1 })
        #expect(counts.of(Self.controlEvents) == Self.once(["didSuspend", "didSuspendTask"]))
        #expect(request.state == .suspended)
        request.cancel()
        withExtendedLifetime(session) {}
    }

    @Test func cancellingFromManyThreadsAtOnceCancelsOnce() async throws {
        let server = try await testServer()
        let counts = LifetimeCounts()
        let session = Session(eventMonitors: [counts.monitor])
        let request = session.request(server.url("/delay/5"))
        counts.monitor.requestDidCreateTask = { request, _ in
            DispatchQueue.concurrentPerform(iterations: 100) { _ in request.cancel() }
        }
        let response = await Self.response(of: request)

        #expect(await waitUntil { counts.current["didFinish"] == 1 })
        #expect(counts.of(Self.controlEvents) == Self.once(["didResume", "didResumeTask", "didCancel", "didCancelTask", "didFinish"]))
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(request.state == .cancelled)
        withExtendedLifetime(session) {}
    }

    // MARK: Lifetime events

    @Test func aRequestSendsEachLifetimeEventOnce() async throws {
        let server = try await testServer()
        let counts = LifetimeCounts()
        let session = Session(eventMonitors: [counts.monitor])
        let request = session.request(server.url("/get"))
        _ = await Self.response(of: request)
        let expected = ["didCreateInitialURLRequest", "didCreateTask", "didCompleteTask", "didFinish", "didResume",
                        "didResumeTask", "didParseResponse"]

        #expect(await waitUntil { counts.current.count == expected.count })
        #expect(counts.current == Self.once(expected))
        #expect(request.state == .finished)
        withExtendedLifetime(session) {}
    }

    @Test func aRequestCancelledOnResumingItsTaskSendsEachLifetimeEventOnce() async throws {
        let server = try await testServer()
        let counts = LifetimeCounts()
        let session = Session(startRequestsImmediately: false, eventMonitors: [counts.monitor])
        let resumedTasks = Locked(0)
        counts.monitor.requestDidResumeTask = { request, _ in
            resumedTasks.withValue { $0 += 1 }
            request.cancel()
        }
        let request = session.request(server.url("/delay/5"))
        let response = await withCheckedContinuation { continuation in
            request.response { continuation.resume(returning: $0) }
            request.resume()
        }
        let expected = ["didCreateInitialURLRequest", "didCreateTask", "didCompleteTask", "didFinish", "didResume",
                        "didParseResponse", "didCancel", "didCancelTask"]

        #expect(await waitUntil { counts.current.count == expected.count })
        #expect(counts.current == Self.once(expected))
        #expect(resumedTasks.current == 1)
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(request.state == .cancelled)
        withExtendedLifetime(session) {}
    }

    // MARK: Response handlers added late

    @Test func aHandlerAddedInTheCompletionOfACancelledRequestIsCalledCancelled() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/delay/1"))
        let errors: [AFError?] = await withCheckedContinuation { continuation in
            request.response { first in
                request.response { second in continuation.resume(returning: [first.error, second.error]) }
            }
            request.cancel()
        }

        #expect(errors.count == 2)
        #expect(errors.allSatisfy { $0?.isExplicitlyCancelledError == true })
    }

    @Test func handlersAddedInTheCompletionOfAFinishedRequestAreEachCalledWithTheValue() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/get"))
        let values: [Data?] = await withCheckedContinuation { continuation in
            request.responseData { first in
                request.responseData { second in
                    request.responseData { third in
                        continuation.resume(returning: [first.value, second.value, third.value])
                    }
                }
            }
        }

        #expect(values.count == 3)
        #expect(values.allSatisfy { $0?.isEmpty == false })
        #expect(request.performedRequests.count == 1)
    }

    // MARK: onHTTPResponse

    @Test func onHTTPResponseSeesTheResponseBeforeTheCompletion() async throws {
        let server = try await testServer()
        let order = Locked<[String]>([])
        let initial = Locked<HTTPURLResponse?>(nil)
        let response = await Self.response(of: AF.request(server.url("/get"), parameters: ["foo": "bar"])
            .onHTTPResponse { response in
                initial.withValue { $0 = response }
                order.withValue { $0.append("response") }
            })
        order.withValue { $0.append("completion") }

        #expect(order.current == ["response", "completion"])
        #expect(initial.current === response.response)
        #expect(response.data != nil)
        #expect(response.error == nil)
    }

    @Test func onHTTPResponseCancellingKeepsTheResponseAndGivesNoData() async throws {
        let server = try await testServer()
        let initial = Locked<HTTPURLResponse?>(nil)
        let request = AF.request(server.url("/get"), parameters: ["foo": "bar"])
            .onHTTPResponse { response, completionHandler in
                initial.withValue { $0 = response }
                completionHandler(.cancel)
            }
        let response = await Self.response(of: request)

        #expect(response.request != nil)
        #expect(response.response != nil)
        #expect(initial.current === response.response)
        #expect(response.data == nil)
        #expect(request.isCancelled)
        #expect(response.error?.isExplicitlyCancelledError == true)
    }

    // MARK: Creation callbacks and descriptions

    @Test func urlRequestAndTaskCreationHandlersRunBeforeTheCompletion() async throws {
        let server = try await testServer()
        let order = Locked<[String]>([])
        _ = await Self.response(of: AF.request(server.url("/get"))
            .onURLRequestCreation { _ in order.withValue { $0.append("request") } }
            .onURLSessionTaskCreation { _ in order.withValue { $0.append("task") } })
        order.withValue { $0.append("completion") }

        #expect(order.current == ["request", "task", "completion"])
    }

    @Test func cURLDescriptionOfAnInvalidURLIsStillGiven() async throws {
        let session = Session(requestSetup: .eager)
        let description: String = await withCheckedContinuation { continuation in
            session.request("invalid_url").cURLDescription { continuation.resume(returning: $0) }
        }
        withExtendedLifetime(session) {}
        #expect(!description.isEmpty)
    }
}
