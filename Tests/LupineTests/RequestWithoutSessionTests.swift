import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// A real `DataRequest` driven through its whole pipeline by `ScriptedEnvironment`: no Session,
/// no socket. Each test scripts the exchanges, makes the request, and checks what the caller sees.
@Suite(.timeLimit(.minutes(1)))
struct RequestWithoutSessionTests {
    private static let address = "https://api.example.test/items"

    private static func body(_ text: String) -> ScriptedStep { .body(Data(text.utf8)) }

    private static func head(_ statusCode: Int, _ fields: [String: String] = [:]) -> ScriptedStep {
        .head(statusCode, fields.sorted { $0.key < $1.key }.map { HTTPHeader(name: $0.key, value: $0.value) })
    }

    /// A 200 response as the cache holds it, stored just now.
    private static func stored(_ body: String, _ fields: [String: String]) -> StoredResponse {
        let entry = HTTPCacheEntry(statusCode: 200, headerFields: fields, requestTime: Date(), responseTime: Date(), varyValues: [:])
        return StoredResponse(entry: entry, data: Data(body.utf8), storagePolicy: .allowed)
    }

    /// The caller's view of a finished request: the response, and the monitor events seen. Checks
    /// the environment was called on its root queue only.
    private static func run(_ request: DataRequest, in environment: ScriptedEnvironment)
        async -> (response: DataResponse<Data, AFError>, events: [String]) {
        let monitor = RequestEventRecorder(queue: environment.rootQueue)
        request.eventMonitor(monitor)
        let response = await request.serializingData().response
        await environment.drain()
        // Every call but `recordHead` comes from the root queue, as the protocol promises.
        #expect(environment.recorded.callsOffTheRootQueue.isEmpty)
        return (response, monitor.events)
    }

    @Test func retrierRetriesAFailedAttemptAndTheSecondSucceeds() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.complete(URLError(.networkConnectionLost))],
            [Self.head(200, ["Content-Length": "2"]), Self.body("ok"), .complete(nil)],
        ], retryAnswers: [.retry])
        let request = environment.dataRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.value == Data("ok".utf8))
        #expect(response.response?.statusCode == 200)
        #expect(request.retryCount == 1)
        #expect(environment.recorded.attempts == 2)
        #expect(environment.recorded.sent.count == 2)
        #expect(environment.recorded.retryQuestions.count == 1)
        #expect(environment.recorded.retryQuestions.first?.underlyingError.flatMap { $0 as? URLError }?.code == .networkConnectionLost)
        #expect(environment.recorded.finished == 1)
        #expect(events == ["resume", "retrying", "finish"])
    }

    @Test func retrierThatDeclinesLeavesTheFailure() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [[.complete(URLError(.timedOut))]])
        let request = environment.dataRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect((response.error?.underlyingError as? URLError)?.code == .timedOut)
        #expect(request.retryCount == 0)
        #expect(environment.recorded.attempts == 1)
        #expect(events == ["resume", "finish"])
    }

    @Test func redirectIsFollowedToItsLocation() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [Self.head(302, ["Location": "https://api.example.test/moved"]), Self.body("elsewhere"), .complete(nil)],
            [Self.head(200, ["Content-Length": "5"]), Self.body("moved"), .complete(nil)],
        ])
        let request = environment.dataRequest(url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("moved".utf8))
        #expect(response.response?.url?.path == "/moved")
        #expect(environment.recorded.sent.map(\.url.path) == ["/items", "/moved"])
        #expect(environment.recorded.recordedHeads == [302, 200])
        #expect(environment.recorded.attempts == 1)
        #expect(request.retryCount == 0)
    }

    @Test func notModifiedRevalidationDeliversTheStoredResponse() async throws {
        let url = try #require(URL(string: Self.address))
        let stored = Self.stored("stored body", ["ETag": "\"v1\"", "Cache-Control": "no-cache"])
        let environment = ScriptedEnvironment(exchanges: [
            [Self.head(304, ["ETag": "\"v1\""]), .complete(nil)],
        ], cacheActions: [.revalidate(stored, conditionalHeaders: [HTTPHeader(name: "If-None-Match", value: "\"v1\"")])])
        let request = environment.dataRequest(url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("stored body".utf8))
        #expect(response.response?.statusCode == 200)
        let conditional = environment.recorded.sent.first?.headerFields.first { $0.name == "If-None-Match" }
        #expect(conditional?.value == "\"v1\"")
        #expect(environment.recorded.sent.count == 1)
    }

    @Test func freshStoredResponseIsReplayedWithoutTheNetwork() async throws {
        let url = try #require(URL(string: Self.address))
        let stored = Self.stored("from the cache", ["Cache-Control": "max-age=60"])
        let environment = ScriptedEnvironment(exchanges: [], cacheActions: [.replay(stored)])
        let request = environment.dataRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.value == Data("from the cache".utf8))
        #expect(response.response?.statusCode == 200)
        #expect(response.response?.value(forHTTPHeaderField: "Age") != nil)
        #expect(environment.recorded.sent.isEmpty)
        #expect(environment.recorded.recordedHeads.isEmpty)
        #expect(events == ["resume", "finish"])
    }

    @Test func challengeIsAnsweredWithTheRequestsCredential() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [Self.head(401, ["WWW-Authenticate": "Basic realm=\"items\""]), Self.body("who are you"), .complete(nil)],
            [Self.head(200, ["Content-Length": "7"]), Self.body("welcome"), .complete(nil)],
        ])
        let request = environment.dataRequest(url)
        request.authenticate(username: "user", password: "secret")

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("welcome".utf8))
        #expect(environment.recorded.sent.count == 2)
        #expect(environment.recorded.sent.first?.headerFields.contains { $0.name == "Authorization" } == false)
        let answer = environment.recorded.sent.last?.headerFields.first { $0.name == "Authorization" }
        #expect(answer?.value == "Basic " + Data("user:secret".utf8).base64EncodedString())
        #expect(environment.recorded.attempts == 1)
    }

    @Test func cancelBeforeTheHopSendsNothing() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [[Self.head(200), .complete(nil)]], beforeHop: { $0.cancel() })
        let request = environment.dataRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(response.response == nil)
        #expect(environment.recorded.sent.isEmpty)
        #expect(environment.recorded.retryQuestions.isEmpty)
        #expect(request.isCancelled)
        #expect(events == ["resume", "cancel", "finish"])
    }

    @Test func cancelAfterTheHeadEndsTheExchange() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [Self.head(200, ["Content-Length": "4"]), .perform { $0.cancel() }, Self.body("late"), .complete(nil)],
        ])
        let request = environment.dataRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(response.response?.statusCode == 200)
        #expect(response.data?.isEmpty ?? true)
        #expect(environment.recorded.sent.count == 1)
        #expect(environment.recorded.retryQuestions.isEmpty)
        #expect(events == ["resume", "cancel", "finish"])
    }

    @Test func cancelMidBodyKeepsNoMoreOfTheBody() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [Self.head(200, ["Content-Length": "10"]), Self.body("first"), .perform { $0.cancel() }, Self.body("after"), .complete(nil)],
        ])
        let request = environment.dataRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(response.response?.statusCode == 200)
        #expect(response.data.map { String(decoding: $0, as: UTF8.self) } != "firstafter")
        #expect(environment.recorded.sent.count == 1)
        #expect(events == ["resume", "cancel", "finish"])
    }
}

extension RequestWithoutSessionTests {
    @Test func suspendedMidBodyTheRequestCompletesOnceResumed() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [Self.head(200, ["Content-Length": "10"]), Self.body("first"),
             .perform { request in
                 request.suspend()
                 DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { request.resume() }
             },
             Self.body("after"), .complete(nil)],
        ])
        let request = environment.dataRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.value == Data("firstafter".utf8))
        #expect(environment.recorded.sent.count == 1)
        #expect(events == ["resume", "suspend", "resume", "finish"])
    }
}
