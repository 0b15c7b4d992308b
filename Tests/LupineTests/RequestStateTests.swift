import Foundation
import Lupine
import LupineTestServer
import Testing

/// Resume, suspend, cancel and the Session's start settings, observed over loopback.
@Suite struct RequestStateTests {
    @Test func requestWithoutAutomaticStartSendsNothingUntilResumed() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let path = "/anything/manual-start-\(UUID().uuidString)"
        let done = Locked<AFDataResponse<Data?>?>(nil)
        let request = session.request(server.url(path)).response { response in done.withValue { $0 = response } }
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(request.state == .initialized)
        #expect(request.request == nil)
        #expect(server.hits(for: path) == 0)
        request.resume()
        #expect(await waitUntil { done.current != nil })
        #expect(done.current?.response?.statusCode == 200)
        #expect(server.hits(for: path) == 1)
        #expect(request.isFinished)
    }

    @Test func eagerSetupBuildsTheURLRequestButSendsOnlyOnResume() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false, requestSetup: .eager)
        let path = "/anything/eager-\(UUID().uuidString)"
        let request = session.request(server.url(path))
        #expect(await waitUntil { request.request != nil })
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(server.hits(for: path) == 0)
        let task = request.serializingData()
        request.resume()
        let response = await task.response
        #expect(response.response?.statusCode == 200)
        #expect(server.hits(for: path) == 1)
    }

    @Test func perRequestAutomaticResumeOverridesTheSession() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let response = await session.request(server.url("/get"), shouldAutomaticallyResume: true).serializingString().response
        #expect(response.response?.statusCode == 200)
    }

    @Test func cancelBeforeResumeFinishesWithExplicitlyCancelledAndSendsNothing() async throws {
        let server = try await testServer()
        let path = "/anything/cancel-before-\(UUID().uuidString)"
        let session = Session(startRequestsImmediately: false)
        let request = session.request(server.url(path))
        request.cancel()
        let response = await withCheckedContinuation { continuation in
            request.response { continuation.resume(returning: $0) }
        }
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
        #expect(server.hits(for: path) == 0)
    }

    @Test func cancelDuringTheExchangeEndsItPromptly() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/delay/30"))
        let started = Date()
        let task = request.serializingData()
        try await Task.sleep(nanoseconds: 200_000_000)
        request.cancel()
        let response = await task.response
        #expect(response.error?.isExplicitlyCancelledError == true)
        // Long before the server's answer (30 s), with room for a loaded machine.
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(request.state == .cancelled)
    }

    @Test func suspendStopsReadingTheBodyUntilResume() async throws {
        let server = try await testServer()
        // Sent over 3 seconds: the body cannot have arrived whole by the time suspend() acts,
        // however fast loopback is (a 32 MiB body at full speed sometimes did), and a request that
        // kept reading while suspended would see the drip go on.
        let size = 4 << 20
        let received = Locked<Int64>(0)
        let request = AF.request(server.url("/drip?numbytes=\(size)&duration=3"))
            .downloadProgress { progress in received.withValue { $0 = progress.completedUnitCount } }
        let task = request.serializingData()
        #expect(await waitUntil { received.current > 0 })
        request.suspend()
        // The progress handler runs on a queue: its last report may land late.
        let whileSuspended = await valueOnceStill { received.current }
        try await Task.sleep(nanoseconds: 500_000_000)
        // Nothing more is read while suspended, though the server goes on sending.
        #expect(received.current == whileSuspended)
        #expect(whileSuspended < Int64(size))
        request.resume()
        let data = try await task.value
        #expect(data.count == size)
        #expect(data.allSatisfy { $0 == UInt8(ascii: "*") })
    }

    @Test func handlerAddedAfterFinishRunsOnStoredResultWithoutANewRequest() async throws {
        let server = try await testServer()
        let path = "/anything/replay-\(UUID().uuidString)"
        let request = AF.request(server.url(path))
        let first = try await request.serializingString().value
        #expect(request.isFinished)
        let second = try await request.serializingString().value
        #expect(first == second)
        #expect(server.hits(for: path) == 1)
        #expect(request.isFinished)
    }

    @Test func handlersCompleteInTheOrderTheyWereAdded() async throws {
        let server = try await testServer()
        let order = Locked<[Int]>([])
        let queue = DispatchQueue(label: "order")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            AF.request(server.url("/json"))
                .responseData(queue: queue) { _ in order.withValue { $0.append(1) } }
                .responseString(queue: queue) { _ in order.withValue { $0.append(2) } }
                .response(queue: queue) { _ in
                    order.withValue { $0.append(3) }
                    continuation.resume()
                }
        }
        #expect(order.current == [1, 2, 3])
    }

    @Test func resumeAndSuspendNotificationsArePosted() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/delay/0.3"))
        let names = Locked<[Notification.Name]>([])
        let observers = [Request.didResumeNotification, Request.didSuspendNotification, Request.didFinishNotification].map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                if note.request == request { names.withValue { $0.append(note.name) } }
            }
        }
        defer { observers.forEach { NotificationCenter.default.removeObserver($0) } }
        request.suspend()
        request.resume()
        _ = await request.serializingData().response
        #expect(await waitUntil { names.current.contains(Request.didFinishNotification) })
        #expect(names.current.first == Request.didSuspendNotification)
        #expect(names.current.contains(Request.didResumeNotification))
    }

    @Test func descriptionShowsMethodURLAndStatus() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/status/201"), method: .put)
        #expect(request.description == "No request created yet." || request.description.hasPrefix("PUT"))
        _ = await request.serializingData().response
        #expect(request.description == "PUT \(server.url("/status/201")) (201)")
    }
}
