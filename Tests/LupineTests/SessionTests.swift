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
        let request = session.request(server.url("/delay/0.5"))
        let task = request.serializingData()
        try await Task.sleep(nanoseconds: 100_000_000)
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
