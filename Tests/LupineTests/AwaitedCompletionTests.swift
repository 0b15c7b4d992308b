import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// A task awaiting `serializing...` runs the end of the exchange itself (validators, monitors,
/// serializers) instead of the transport's thread. What a caller sees must not change: the work
/// stays on the root queue, every handler and awaiter gets the response, retries come back to the
/// awaiting task, and nothing is kept alive after.
@Suite struct AwaitedCompletionTests {
    private static let rootKey = DispatchSpecificKey<String>()

    /// Validators and serializers run on the Session's root queue, whichever thread runs them.
    @Test func validatorsAndSerializersStillRunOnTheRootQueue() async throws {
        let server = try await testServer()
        let root = DispatchQueue(label: "awaited.root")
        root.setSpecific(key: Self.rootKey, value: "root")
        let session = Session(rootQueue: root)
        let seen = Locked<[String]>([])
        let serializer = RecordingSerializer { seen.withValue { $0.append("serializer " + (DispatchQueue.getSpecific(key: Self.rootKey) ?? "elsewhere")) } }

        let response = await session.request(server.url("/get"))
            .validate { _, _, _ in
                seen.withValue { $0.append("validator " + (DispatchQueue.getSpecific(key: Self.rootKey) ?? "elsewhere")) }
                return .success(())
            }
            .serializingResponse(using: serializer).response

        #expect(response.error == nil)
        #expect(seen.current == ["validator root", "serializer root"])
        withExtendedLifetime(session) {}
    }

    /// Two tasks awaiting one request, and a closure handler on it, all get the response.
    @Test func everyAwaiterAndHandlerOfTheRequestGetsTheResponse() async throws {
        let server = try await testServer()
        let session = Session()
        let handled = Locked<Int?>(nil)
        let request = session.request(server.url("/bytes/100"))
        request.response { response in handled.withValue { $0 = response.data?.count } }
        let task = request.serializingData()
        async let first = task.response
        async let second = task.response
        let (one, two) = await (first, second)

        #expect(one.value?.count == 100)
        #expect(two.value?.count == 100)
        #expect(await waitUntil { handled.current == 100 })
        withExtendedLifetime(session) {}
    }

    /// A response that fails validation and is retried: the task that ran the first attempt's
    /// end awaits the second attempt, and gets its response.
    @Test func aRetriedAttemptComesBackToTheAwaitingTask() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/bytes/10"), interceptor: firstAttemptFailsInterceptor(on: server))

        let response = await request.validate().serializingData().response

        #expect(response.error == nil)
        #expect(response.response?.statusCode == 200)
        #expect(response.value?.count == 10)
        #expect(request.retryCount == 1)
        withExtendedLifetime(session) {}
    }

    /// The task's offer to run the end of an exchange holds the request: a response from the
    /// cache, which has no exchange to end, must not leave it behind.
    @Test func aRequestAnsweredFromTheCacheWhileAwaitedIsReleased() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let session = Session(configuration: configuration)
        let path = "/cached/\(UUID().uuidString)?Cache-Control=max-age%3D3600"
        #expect(await session.request(server.url(path)).serializingData().response.error == nil)

        let weakRequest: WeakReference<DataRequest>
        do {
            let request = session.request(server.url(path))
            weakRequest = WeakReference(request)
            let response = await request.serializingData().response
            #expect(response.error == nil)
        }
        #expect(await waitUntil { weakRequest.isReleased })
        withExtendedLifetime(session) {}
    }

    /// A closure handler gets its response even while the task awaiting the same request cannot
    /// run: the end of the exchange is handed to the awaiting task only when every handler of
    /// the request is awaited.
    @Test func aClosureHandlerDoesNotWaitForABlockedAwaitingTask() async throws {
        let server = try await testServer()
        let session = Session()
        let executor = BlockableExecutor()
        let handled = Locked(false)
        let request = session.request(server.url("/delay/1"))
        request.response { _ in handled.withValue { $0 = true } }
        let waiting = Task(executorPreference: executor) { await request.serializingData().response }
        #expect(await waitUntil { request.performedRequests.isEmpty == false })
        executor.block()
        defer { executor.unblock() }

        #expect(await waitUntil(timeout: 10) { handled.current })
        executor.unblock()
        #expect(await waiting.value.error == nil)
        withExtendedLifetime(session) {}
    }

    /// A task cancelled while its request is on the network still gets the request's end: the
    /// request is cancelled and released.
    @Test func cancellingTheAwaitingTaskEndsAndReleasesTheRequest() async throws {
        let server = try await testServer()
        let session = Session()
        let weakRequest: WeakReference<DataRequest>
        do {
            let request = session.request(server.url("/delay/5"))
            weakRequest = WeakReference(request)
            let waiting = Task { await request.serializingData().response }
            #expect(await waitUntil { request.performedRequests.isEmpty == false })
            waiting.cancel()
            let response = await waiting.value
            #expect(response.error?.isExplicitlyCancelledError == true)
        }
        #expect(await waitUntil { weakRequest.isReleased })
        withExtendedLifetime(session) {}
    }
}

/// A serializer that calls `sawIt` where it runs, then returns the body.
private struct RecordingSerializer: ResponseSerializer {
    let sawIt: @Sendable () -> Void

    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Data {
        sawIt()
        if let error { throw error }
        return data ?? Data()
    }
}

/// Runs jobs on a serial queue that a test can hold up.
private final class BlockableExecutor: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "awaited.blockable")
    private let gate = DispatchSemaphore(value: 0)
    private let isBlocked = Locked(false)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Holds the queue until `unblock()`.
    func block() {
        isBlocked.withValue { $0 = true }
        queue.async { self.gate.wait() }
    }

    /// Lets the queue go on; once only per `block()`.
    func unblock() {
        let wasBlocked = isBlocked.withValue { blocked -> Bool in
            defer { blocked = false }
            return blocked
        }
        if wasBlocked { gate.signal() }
    }
}
