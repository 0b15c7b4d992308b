import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// `Request.task`, `tasks`, `onURLSessionTaskCreation` and `urlSessionTasks`: one facade
/// URLSessionTask per attempt that reports the attempt and drives the request.
@Suite struct URLSessionTaskSurfaceTests {
    @Test func theTaskDescribesTheCompletedAttempt() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/bytes/300"))
        let response = await request.serializingData().response
        let task = try #require(request.task as? URLSessionDataTask)
        #expect(task.state == .completed)
        #expect(task.originalRequest?.url == request.request?.url)
        #expect(task.currentRequest?.url == request.performedRequests.last?.url)
        #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
        #expect(task.error == nil)
        #expect(task.taskIdentifier > 0)
        #expect(task.countOfBytesReceived == 300)
        #expect(task.countOfBytesExpectedToReceive == 300)
        #expect(response.data?.count == 300)
        #expect(request.tasks.count == 1)
        #expect(request.firstTask === task)
        #expect(request.lastTask === task)
        // The same object every time: the facade is made once.
        #expect(request.task === task)
        withExtendedLifetime(session) {}
    }

    @Test func eachKindOfRequestHasTheTaskClassURLSessionWouldMake() async throws {
        let server = try await testServer()
        let session = Session()
        let download = session.download(server.url("/bytes/10"))
        let downloaded = await download.serializingDownloadedFileURL().response
        #expect(download.task is URLSessionDownloadTask)
        if let url = downloaded.value { try? FileManager.default.removeItem(at: url) }

        let upload = session.upload(Data("payload".utf8), to: server.url("/post"))
        _ = await upload.serializingData().response
        let uploadTask = try #require(upload.task as? URLSessionUploadTask)
        #expect(uploadTask.countOfBytesSent == 7)

        let data = session.request(server.url("/get"))
        _ = await data.serializingData().response
        #expect(data.task is URLSessionDataTask)
        #expect(!(data.task is URLSessionUploadTask))
        withExtendedLifetime(session) {}
    }

    @Test func eachRetryIsANewTaskAndEarlierTasksKeepTheirAttempt() async throws {
        let server = try await testServer()
        let attempts = Locked(0)
        let adapter = Adapter { request, _, completion in
            var request = request
            if attempts.increment() == 1 { request.url = URL(string: server.url("/status/500")) }
            completion(.success(request))
        }
        let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
        let session = Session()
        let created = Locked<[URLSessionTask]>([])
        let request = session.request(server.url("/get"), interceptor: Interceptor(adapter: adapter, retrier: retrier))
            .onURLSessionTaskCreation { task in created.withValue { $0.append(task) } }
        let response = await request.validate().serializingData().response
        #expect(response.error == nil)
        let tasks = request.tasks
        try #require(tasks.count == 2)
        #expect((tasks[0].response as? HTTPURLResponse)?.statusCode == 500)
        #expect((tasks[1].response as? HTTPURLResponse)?.statusCode == 200)
        // A 500 is a complete response: the task itself did not fail, validation did.
        #expect(tasks[0].error == nil)
        #expect(tasks[0].state == .completed)
        #expect(tasks[0].taskIdentifier != tasks[1].taskIdentifier)
        #expect(tasks[0].originalRequest?.url?.path == "/status/500")
        #expect(await waitUntil { created.current.count == 2 })
        #expect(created.current[0] === tasks[0])
        #expect(created.current[1] === tasks[1])
        withExtendedLifetime(session) {}
    }

    @Test func aHandlerSetLateGetsTheCurrentTask() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/get"))
        _ = await request.serializingData().response
        let seen = Locked<URLSessionTask?>(nil)
        request.onURLSessionTaskCreation { task in seen.withValue { $0 = task } }
        #expect(await waitUntil { seen.current != nil })
        #expect(seen.current === request.task)
        withExtendedLifetime(session) {}
    }

    @Test func urlSessionTasksStreamsTheTaskAndEnds() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/get"))
        let stream = request.urlSessionTasks()
        _ = await request.serializingData().response
        let tasks: [URLSessionTask] = await Array(stream)
        #expect(tasks.count == 1)
        #expect(tasks.first === request.task)
        withExtendedLifetime(session) {}
    }

    @Test func aTaskWaitingForResumeIsSuspendedAndItsResumeStartsTheRequest() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false, requestSetup: .eager)
        let request = session.request(server.url("/get"))
        #expect(await waitUntil { request.task != nil })
        let task = try #require(request.task)
        #expect(task.state == .suspended)
        #expect(request.performedRequests.isEmpty)
        task.resume()
        #expect(request.isResumed)
        let response = await request.serializingData().response
        #expect(response.response?.statusCode == 200)
        #expect(task.state == .completed)
        withExtendedLifetime(session) {}
    }

    @Test func theTasksSuspendAndCancelDriveTheRequest() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/drip?numbytes=5&duration=5"))
        request.resume()
        #expect(await waitUntil { request.task != nil })
        let task = try #require(request.task)
        #expect(task.state == .running)
        task.suspend()
        #expect(request.isSuspended)
        #expect(task.state == .suspended)
        task.resume()
        #expect(request.isResumed)
        task.cancel()
        #expect(request.isCancelled)
        let response = await request.serializingData().response
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(task.state == .completed)
        #expect((task.error as? AFError)?.sessionTaskURLErrorCode == .cancelled)
        // A completed task ignores its controls, as URLSession's do.
        task.resume()
        #expect(request.isCancelled)
        withExtendedLifetime(session) {}
    }

    @Test func downloadTasksCancelProducingResumeData() async throws {
        let server = try await testServer()
        let session = Session()
        let download = session.download(server.url("/bytes/4096?seed=7&stall-after=1024"))
        download.resume()
        #expect(await waitUntil { (download.task?.countOfBytesReceived ?? 0) >= 1024 })
        let task = try #require(download.task as? URLSessionDownloadTask)
        let resumeData = Locked<Data??>(nil)
        task.cancel { data in resumeData.withValue { $0 = .some(data) } }
        #expect(await waitUntil { resumeData.current != nil })
        #expect((resumeData.current ?? nil) != nil)
        _ = await download.serializingDownloadedFileURL().response
        #expect(download.isCancelled)
        // The partial file stays for the resume data; the test removes it.
        for name in temporaryFilesLeft(by: [download]) {
            try FileManager.default.removeItem(at: FileManager.default.temporaryDirectory.appendingPathComponent(name))
        }
        withExtendedLifetime(session) {}
    }

    @Test func redirectAndCacheHandlersReceiveTheAttemptsTask() async throws {
        let server = try await testServer()
        let redirectTask = Locked<URLSessionTask?>(nil)
        let cacheTask = Locked<URLSessionDataTask?>(nil)
        let redirector = Redirector.modify { task, request, _ in
            redirectTask.withValue { $0 = task }
            return request
        }
        let cacher = ResponseCacher.modify { task, cached in
            cacheTask.withValue { $0 = task }
            return cached
        }
        let configuration = URLSessionConfiguration.af.default
        configuration.urlCache = URLCache(memoryCapacity: 1_000_000, diskCapacity: 0, diskPath: nil)
        let session = Session(configuration: configuration)
        let request = session.request(server.url("/redirect-to?url=/cache/60")).redirect(using: redirector).cacheResponse(using: cacher)
        _ = await request.serializingData().response
        #expect(redirectTask.current != nil)
        #expect(redirectTask.current === request.task)
        #expect(cacheTask.current === request.task)
        withExtendedLifetime(session) {}
    }

    @Test func noFacadeIsMadeWhenNothingAsksForOne() async throws {
        let server = try await testServer()
        // The default monitor (notifications) and a monitor without task events: no facade.
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [AlamofireNotifications(), monitor])
        // A first request teaches the Session that RecordingMonitor keeps the task events' defaults.
        _ = await session.request(server.url("/get")).serializingData().response
        let request = session.request(server.url("/get"))
        _ = await request.serializingData().response
        #expect(await waitUntil { monitor.names.filter { $0 == "requestDidFinish" }.count == 2 })
        let made = request.mutableState.withLock { $0.machine.ledger.withRecord(0) { $0.task?.facade != nil } == true }
        #expect(!made)
        // Asking makes it.
        #expect(request.task != nil)
        #expect(request.mutableState.withLock { $0.machine.ledger.withRecord(0) { $0.task?.facade != nil } == true })
        withExtendedLifetime(session) {}
    }
}
