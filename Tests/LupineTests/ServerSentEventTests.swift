import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

@Suite("Server-Sent Events")
struct ServerSentEventTests {
    @Test func theHandlerGetsEachEventThenTheCompletion() async throws {
        let server = try await testServer()
        let session = Session()

        let (events, completion) = await withCheckedContinuation { continuation in
            let events = Locked<[ServerSentEvent]>([])
            session.streamRequest(server.url("/sse?count=3")).responseServerSentEvents { stream in
                switch stream.event {
                case let .stream(result): if case let .success(event) = result { events.withValue { $0.append(event) } }
                case let .complete(completion): continuation.resume(returning: (events.current, completion))
                }
            }
        }

        #expect(events.map(\.id) == ["1", "2", "3"])
        #expect(events.map(\.event) == ["tick", "tick", "tick"])
        #expect(events.first?.data == "event 1\nline two")
        #expect(completion.error == nil)
    }

    @Test func theAsyncStreamYieldsEventsSplitAcrossChunksWithCRLF() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.streamRequest(server.url("/sse?count=4&crlf=1&retry=250"))

        var events: [ServerSentEvent] = []
        for await stream in request.streamTask().streamingServerSentEvents() {
            if case let .stream(.success(event)) = stream.event { events.append(event) }
        }

        #expect(events.map(\.data) == (1...4).map { "event \($0)\nline two" })
        #expect(events.allSatisfy { $0.retry == 250 })
    }

    @Test func reconnectsAfterADroppedConnectionWithLastEventID() async throws {
        let server = try await testServer()
        let session = Session()
        // Each connection sends two events, half of a third, then drops; the server resumes after
        // the Last-Event-ID it gets, and answers 204 once all 5 events were sent.
        var ids: [String] = []
        for try await event in session.serverSentEvents(from: server.url("/sse?count=5&drop-after=2&retry=10"), reconnectionTime: 0.01) {
            ids.append(event.id ?? "nil")
        }

        #expect(ids == ["1", "2", "3", "4", "5"])
        #expect(server.hits(for: "/sse") >= 4)
    }

    @Test func resumesFromAGivenLastEventID() async throws {
        let server = try await testServer()
        let session = Session()
        var ids: [String] = []
        for try await event in session.serverSentEvents(from: server.url("/sse?count=4&retry=10"), lastEventID: "2", reconnectionTime: 0.01) {
            ids.append(event.id ?? "nil")
        }

        #expect(ids == ["3", "4"])
    }

    @Test func aResponseThatIsNotAnEventStreamFailsWithoutReconnecting() async throws {
        let server = try await testServer()
        let session = Session()

        await #expect(throws: AFError.self) {
            for try await _ in session.serverSentEvents(from: server.url("/get"), reconnectionTime: 0.01) {}
        }
        do {
            for try await _ in session.serverSentEvents(from: server.url("/status/503"), reconnectionTime: 0.01) {}
            Issue.record("no error")
        } catch {
            #expect((error as? AFError)?.responseCode == 503)
        }
    }

    @Test func givesUpAfterTheReconnectionLimit() async throws {
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let session = Session()
        let url = refusing.url("/sse")
        do {
            for try await _ in session.serverSentEvents(from: url, reconnectionTime: 0.01, maximumReconnections: 2) {}
            Issue.record("no error")
        } catch {
            #expect((error as? AFError)?.sessionTaskURLErrorCode == .cannotConnectToHost)
        }
    }
}
