import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// A monitor written for Alamofire: it logs the request events and the URLSessionTask-typed ones,
/// with the task each one carries.
final class TaskLoggingMonitor: EventMonitor, @unchecked Sendable {
    let queue = DispatchQueue(label: "test.task-monitor")
    private let log = Locked<[(name: String, task: URLSessionTask?)]>([])

    var names: [String] { log.current.map(\.name) }
    var tasks: [URLSessionTask] { log.current.compactMap(\.task) }

    private func record(_ name: String, _ task: URLSessionTask? = nil) {
        log.withValue { $0.append((name, task)) }
    }

    func requestDidResume(_ request: Request) { record("requestDidResume") }
    func requestDidSuspend(_ request: Request) { record("requestDidSuspend") }
    func requestDidCancel(_ request: Request) { record("requestDidCancel") }
    func requestDidFinish(_ request: Request) { record("requestDidFinish") }
    func requestIsRetrying(_ request: Request) { record("requestIsRetrying") }
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) { record("didCreateURLRequest") }
    func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) { record("didSendURLRequest") }
    func request(_ request: Request, didCreateTask task: URLSessionTask) { record("didCreateTask", task) }
    func request(_ request: Request, didResumeTask task: URLSessionTask) { record("didResumeTask", task) }
    func request(_ request: Request, didSuspendTask task: URLSessionTask) { record("didSuspendTask", task) }
    func request(_ request: Request, didCancelTask task: URLSessionTask) { record("didCancelTask", task) }
    func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        record("didFailTask(\(error.isServerTrustEvaluationError ? "trust" : "other"))", task)
    }
    func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        let outcome = switch error {
        case nil: "nil"
        case let error? where error.sessionTaskURLErrorCode == .cancelled: "cancelled"
        case _?: "error"
        }
        record("didCompleteTask(\(outcome))", task)
    }
    func request(_ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
                 data: Data?, withResult result: Request.ValidationResult) {
        record("didValidateRequest")
    }
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) { record("didCreateDestinationURL") }
    func request(_ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>) {
        record("didFinishDownloading(\((try? result.get()) == nil ? "failure" : "success"))", task)
    }
}

/// The task-typed EventMonitor events, called with the attempt's facade task in Alamofire's order.
@Suite struct TaskEventTests {
    @Test func aRequestsTaskIsCreatedResumedAndCompletedInAlamofiresOrder() async throws {
        let server = try await testServer()
        let monitor = TaskLoggingMonitor()
        let session = Session(eventMonitors: [monitor])
        let request = session.request(server.url("/get")).validate()
        _ = await request.serializingData().response
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        #expect(monitor.names == ["requestDidResume", "didCreateURLRequest", "didCreateTask", "didResumeTask",
                                  // validate() runs two validators: status code and content type.
                                  "didSendURLRequest", "didValidateRequest", "didValidateRequest", "didCompleteTask(nil)",
                                  "requestDidFinish"])
        #expect(monitor.tasks.allSatisfy { $0 === request.task })
        withExtendedLifetime(session) {}
    }

    @Test func eachRetryCreatesAndCompletesItsOwnTask() async throws {
        let server = try await testServer()
        let monitor = TaskLoggingMonitor()
        let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
        let session = Session(eventMonitors: [monitor])
        let request = session.request(server.url("/status/503"), interceptor: retrier).validate()
        _ = await request.serializingData().response
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        let taskEvents = monitor.names.filter { $0.contains("Task") || $0 == "requestIsRetrying" }
        #expect(taskEvents == ["didCreateTask", "didResumeTask", "didCompleteTask(nil)", "requestIsRetrying",
                               "didCreateTask", "didResumeTask", "didCompleteTask(nil)"])
        let tasks = request.tasks
        #expect(tasks.count == 2)
        #expect(monitor.tasks.prefix(3).allSatisfy { $0 === tasks[0] })
        #expect(monitor.tasks.suffix(3).allSatisfy { $0 === tasks[1] })
        withExtendedLifetime(session) {}
    }

    @Test func suspendResumeAndCancelOfARunningTaskAreReported() async throws {
        let server = try await testServer()
        let monitor = TaskLoggingMonitor()
        let session = Session(eventMonitors: [monitor])
        let request = session.request(server.url("/drip?numbytes=5&duration=5"))
        request.resume()
        #expect(await waitUntil { monitor.names.contains("didSendURLRequest") })
        request.suspend()
        request.resume()
        request.cancel()
        _ = await request.serializingData().response
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        let tail = monitor.names.drop { $0 != "requestDidSuspend" }
        #expect(Array(tail) == ["requestDidSuspend", "didSuspendTask", "requestDidResume", "didResumeTask",
                                "requestDidCancel", "didCancelTask", "didCompleteTask(cancelled)", "requestDidFinish"])
        withExtendedLifetime(session) {}
    }

    @Test func aTaskThatNeverRanCompletesCancelledWhenTheRequestIsCancelled() async throws {
        let server = try await testServer()
        let monitor = TaskLoggingMonitor()
        let session = Session(startRequestsImmediately: false, requestSetup: .eager, eventMonitors: [monitor])
        let request = session.request(server.url("/get"))
        #expect(await waitUntil { monitor.names.contains("didCreateTask") })
        request.cancel()
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        #expect(monitor.names == ["didCreateURLRequest", "didCreateTask", "requestDidCancel", "didCancelTask",
                                  "didCompleteTask(cancelled)", "requestDidFinish"])
        #expect(request.task?.state == .completed)
        withExtendedLifetime(session) {}
    }

    @Test func aSuspendedRequestsNewTaskIsSuspended() async throws {
        let server = try await testServer()
        let monitor = TaskLoggingMonitor()
        let session = Session(startRequestsImmediately: false, requestSetup: .eager, eventMonitors: [monitor])
        let request = session.request(server.url("/get"))
        request.suspend()
        #expect(await waitUntil { monitor.names.contains("didCreateTask") })
        #expect(await waitUntil { monitor.names.contains("didSuspendTask") })
        #expect(request.task?.state == .suspended)
        request.resume()
        _ = await request.serializingData().response
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        #expect(monitor.names.filter { $0.contains("Task") }
            == ["didCreateTask", "didSuspendTask", "didResumeTask", "didCompleteTask(nil)"])
        withExtendedLifetime(session) {}
    }

    @Test func anUntrustedServerFailsTheTaskEarlyThenCompletesItCancelled() async throws {
        let server = try await TLSFixture.server()
        let monitor = TaskLoggingMonitor()
        let session = Session(serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": DefaultTrustEvaluator()]),
                              eventMonitors: [monitor])
        let response = await session.request(server.url("/get")).serializingData().response
        #expect(response.error?.isServerTrustEvaluationError == true)
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        #expect(monitor.names.filter { $0.contains("Task") }
            == ["didCreateTask", "didResumeTask", "didFailTask(trust)", "didCompleteTask(cancelled)"])
        withExtendedLifetime(session) {}
        try await server.shutdown()
    }

    @Test func aDownloadReportsItsFinishedFileBeforeItsTaskCompletes() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let monitor = TaskLoggingMonitor()
        let session = Session(eventMonitors: [monitor])
        let download = session.download(server.url("/bytes/64"), to: { _, _ in (scratch.file("body"), []) })
        _ = await download.serializingDownloadedFileURL().response
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        #expect(monitor.names.filter { $0.contains("Task") || $0.hasPrefix("didFinish") || $0.hasPrefix("didCreateDest") }
            == ["didCreateTask", "didResumeTask", "didCreateDestinationURL", "didFinishDownloading(success)",
                "didCompleteTask(nil)"])
        #expect(monitor.tasks.allSatisfy { $0 === download.task && $0 is URLSessionDownloadTask })

        // A destination that cannot be written: the move fails, and the monitor hears it.
        let failing = Session(eventMonitors: [TaskLoggingMonitor()])
        let blocked = scratch.file("missing-directory/body")
        let failedMonitor = try #require(failing.eventMonitor.monitors.first as? TaskLoggingMonitor)
        let failed = await failing.download(server.url("/bytes/64"), to: { _, _ in (blocked, []) })
            .serializingDownloadedFileURL().response
        #expect(failed.error?.isDownloadedFileMoveError == true)
        #expect(await waitUntil { failedMonitor.names.contains("requestDidFinish") })
        #expect(failedMonitor.names.contains("didFinishDownloading(failure)"))
        withExtendedLifetime((session, failing)) {}
    }

    @Test func closureMonitorsAndRequestMonitorsGetTheTaskEvents() async throws {
        let server = try await testServer()
        let closures = ClosureEventMonitor(queue: DispatchQueue(label: "test.closures"))
        let created = Locked<[URLSessionTask]>([]), completed = Locked<[AFError?]>([])
        closures.requestDidCreateTask = { _, task in created.withValue { $0.append(task) } }
        closures.requestDidCompleteTaskWithError = { _, _, error in completed.withValue { $0.append(error) } }
        let resumed = Locked(0)
        closures.requestDidResumeTask = { _, _ in resumed.increment() }
        let session = Session(eventMonitors: [closures])
        let added = TaskLoggingMonitor()
        let request = session.request(server.url("/get")).eventMonitor(added)
        _ = await request.serializingData().response
        #expect(await waitUntil { completed.current.count == 1 && added.names.contains("didCompleteTask(nil)") })
        #expect(created.current.count == 1)
        #expect(created.current.first === request.task)
        #expect(resumed.current == 1)
        #expect(completed.current.count == 1 && completed.current[0] == nil)
        #expect(added.tasks.allSatisfy { $0 === request.task })
        withExtendedLifetime(session) {}
    }
}
