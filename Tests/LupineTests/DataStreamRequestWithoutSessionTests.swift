import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// A real `DataStreamRequest` driven through its whole pipeline by `ScriptedEnvironment`: no
/// Session, no socket. Each test scripts the exchanges, adds a stream handler, and checks what the
/// handler sees, in order: each chunk, then one completion.
@Suite(.timeLimit(.minutes(1)))
struct DataStreamRequestWithoutSessionTests {
    private static let address = "https://api.example.test/events"

    /// What a stream handler saw: `chunk:<text>` for each chunk, then `complete`; and the completion.
    private struct Seen {
        var events: [String] = []
        var completion: DataStreamRequest.Completion?
    }

    /// Adds a stream handler on a serial queue of its own and returns what it saw once it got the
    /// completion, with the lifetime events of the request. `onChunk` runs in the handler, after the
    /// chunk is recorded, and may throw. Checks the environment was called on its root queue only.
    private static func stream(_ request: DataStreamRequest, in environment: ScriptedEnvironment,
                               onChunk: @escaping @Sendable (DataStreamRequest) throws -> Void = { _ in })
        async -> (seen: Seen, events: [String]) {
        let recorder = RequestEventRecorder(queue: environment.rootQueue)
        request.eventMonitor(recorder)
        let handlerQueue = DispatchQueue(label: "lupine.tests.streamHandler")
        let seen = Locked(Seen())
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            request.responseStream(on: handlerQueue) { stream in
                switch stream.event {
                case let .stream(.success(chunk)):
                    seen.withValue { $0.events.append("chunk:" + String(decoding: chunk, as: UTF8.self)) }
                    try onChunk(request)
                case let .complete(completion):
                    seen.withValue {
                        $0.events.append("complete")
                        $0.completion = completion
                    }
                    continuation.resume()
                }
            }
        }
        await environment.drain()
        #expect(environment.recorded.callsOffTheRootQueue.isEmpty)
        return (seen.current, recorder.events)
    }

    @Test func theHandlerGetsEachChunkInOrderThenTheCompletion() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Type": "text/plain"]), .text("one"), .text("two"), .text("three"), .complete(nil)],
        ])
        let request = environment.dataStreamRequest(url)

        let (seen, events) = await Self.stream(request, in: environment)

        #expect(seen.events == ["chunk:one", "chunk:two", "chunk:three", "complete"])
        #expect(seen.completion?.error == nil)
        #expect(seen.completion?.response?.statusCode == 200)
        #expect(request.downloadProgress.completedUnitCount == 11)
        #expect(environment.recorded.sent.count == 1)
        #expect(events == ["resume", "finish"])
    }

    @Test func cancelMidStreamEndsItWithTheCancellation() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200), .text("one"), .perform { $0.cancel() }],
        ])
        let request = environment.dataStreamRequest(url)

        let (seen, events) = await Self.stream(request, in: environment)

        #expect(seen.events == ["chunk:one", "complete"])
        #expect(seen.completion?.error?.isExplicitlyCancelledError == true)
        #expect(seen.completion?.response?.statusCode == 200)
        #expect(request.isCancelled)
        #expect(environment.recorded.retryQuestions.isEmpty)
        #expect(events == ["resume", "cancel", "finish"])
    }

    @Test func cancelFromTheHandlerEndsTheStreamWithTheCancellation() async throws {
        let url = try #require(URL(string: Self.address))
        // The exchange waits after the first chunk until the handler has cancelled.
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200), .text("one"), .perform { request in Self.waitBlocking { request.isCancelled } }, .text("two"), .complete(nil)],
        ])
        let request = environment.dataStreamRequest(url)

        let (seen, _) = await Self.stream(request, in: environment) { $0.cancel() }

        #expect(seen.events.first == "chunk:one")
        #expect(seen.events.last == "complete")
        #expect(seen.completion?.error?.isExplicitlyCancelledError == true)
    }

    @Test func anErrorThrownByTheHandlerCancelsTheStreamAndIsItsError() async throws {
        struct Refused: Error {}
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200), .text("one"), .perform { request in Self.waitBlocking { request.isCancelled } }, .complete(nil)],
        ])
        let request = environment.dataStreamRequest(url)

        let (seen, events) = await Self.stream(request, in: environment) { _ in throw Refused() }

        #expect(seen.events.first == "chunk:one")
        #expect(seen.events.last == "complete")
        guard case let .responseSerializationFailed(reason: .customSerializationFailed(error))? = seen.completion?.error else {
            Issue.record("expected customSerializationFailed, got \(String(describing: seen.completion?.error))")
            return
        }
        #expect(error is Refused)
        #expect(events.contains("cancel"))
    }

    @Test func aRetryBeforeAnyChunkStreamsOnlyTheSecondAttempt() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.complete(URLError(.networkConnectionLost))],
            [.head(200), .text("fresh"), .complete(nil)],
        ], retryAnswers: [.retry])
        let request = environment.dataStreamRequest(url)

        let (seen, events) = await Self.stream(request, in: environment)

        #expect(seen.events == ["chunk:fresh", "complete"])
        #expect(seen.completion?.error == nil)
        #expect(request.retryCount == 1)
        #expect(events == ["resume", "retrying", "finish"])
    }

    @Test func cancelBeforeTheHopCompletesTheHandlerWithoutAChunk() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [[.head(200), .text("never"), .complete(nil)]], beforeHop: { $0.cancel() })
        let request = environment.dataStreamRequest(url)

        let (seen, events) = await Self.stream(request, in: environment)

        #expect(seen.events == ["complete"])
        #expect(seen.completion?.error?.isExplicitlyCancelledError == true)
        #expect(environment.recorded.sent.isEmpty)
        #expect(events == ["resume", "cancel", "finish"])
    }

    @Test func aTransportFailureMidStreamIsTheCompletionsError() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200), .text("one"), .complete(URLError(.networkConnectionLost))],
        ])
        let request = environment.dataStreamRequest(url)

        let (seen, _) = await Self.stream(request, in: environment)

        #expect(seen.events == ["chunk:one", "complete"])
        #expect(seen.completion?.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(environment.recorded.retryQuestions.count == 1)
    }

    @Test func notModifiedRevalidationStreamsTheStoredBody() async throws {
        let url = try #require(URL(string: Self.address))
        let fields = ["ETag": "\"v1\"", "Cache-Control": "no-cache"]
        let entry = HTTPCacheEntry(statusCode: 200, headerFields: fields, requestTime: Date(), responseTime: Date(), varyValues: [:])
        let stored = StoredResponse(entry: entry, data: Data("stored events".utf8), storagePolicy: .allowed)
        let environment = ScriptedEnvironment(exchanges: [
            [.head(304, fields: ["ETag": "\"v1\""]), .complete(nil)],
        ], cacheActions: [.revalidate(stored, conditionalHeaders: [HTTPHeader(name: "If-None-Match", value: "\"v1\"")])])
        let request = environment.dataStreamRequest(url)

        let (seen, _) = await Self.stream(request, in: environment)

        #expect(seen.events.joined() == "chunk:stored eventscomplete")
        #expect(seen.completion?.error == nil)
        #expect(seen.completion?.response?.statusCode == 200)
        #expect(environment.recorded.sent.first?.headerFields.first { $0.name == "If-None-Match" }?.value == "\"v1\"")
    }

    /// Waits on the calling thread, a queue of the test's, until `condition` holds (at most 10 s).
    private static func waitBlocking(_ condition: () -> Bool) {
        let deadline = Date(timeIntervalSinceNow: 10)
        while !condition(), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
    }
}

extension DataStreamRequestWithoutSessionTests {
    @Test func suspendedMidStreamTheRestArrivesInOrderOnceResumed() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200), .text("one"),
             .perform { request in
                 request.suspend()
                 DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { request.resume() }
             },
             .text("two"), .text("three"), .complete(nil)],
        ])
        let request = environment.dataStreamRequest(url)

        let (seen, events) = await Self.stream(request, in: environment)

        #expect(seen.events == ["chunk:one", "chunk:two", "chunk:three", "complete"])
        #expect(seen.completion?.error == nil)
        #expect(events == ["resume", "suspend", "resume", "finish"])
    }
}

extension DataStreamRequestWithoutSessionTests {
    @Test func aRetryAfterChunksStreamsTheSecondAttemptAfterThem() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200), .text("one"), .complete(URLError(.networkConnectionLost))],
            [.head(200), .text("again"), .complete(nil)],
        ], retryAnswers: [.retry])
        let request = environment.dataStreamRequest(url)

        let (seen, events) = await Self.stream(request, in: environment)

        // As in Alamofire, the handler stays across attempts: what it already had is not taken back.
        #expect(seen.events == ["chunk:one", "chunk:again", "complete"])
        #expect(seen.completion?.error == nil)
        #expect(request.retryCount == 1)
        #expect(events == ["resume", "retrying", "finish"])
    }
}
