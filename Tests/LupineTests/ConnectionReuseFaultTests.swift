import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Kept-alive connections that go bad between requests: the caller sees a normal response when
/// the request can be sent again safely, as with URLSession, never another request's bytes, and
/// no connection is left open.
@Suite struct ConnectionReuseFaultTests {
    /// A Session whose requests share one connection at a time.
    private static func session() -> Session {
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = 1
        return Session(configuration: configuration)
    }

    /// Waits (polling, up to 5 s) until `condition` holds.
    private static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    @Test func pooledConnectionClosedByTheServerBetweenRequestsIsReplaced() async throws {
        let server = try await LupineFaultServer.start(FaultPlan(.responseHead, .silence, faultedConnections: 0),
                                                       reuse: .closeAfterEachResponse)
        let session = Self.session()
        let first = await session.request(server.url("/first")).serializingString().response
        // The server closes the idle connection; the client's side must close too.
        #expect(await Self.eventually { server.openConnections == 0 })
        #expect(await ClientSockets.leaked(toPorts: [server.port], beyond: []).isEmpty)
        let second = await session.request(server.url("/second")).serializingString().response

        #expect(first.value == "ok")
        #expect(second.value == "ok", "\(String(describing: second.error))")
        #expect(server.acceptedConnections == 2)
        await session.shutdown()
        #expect(await ClientSockets.leaked(toPorts: [server.port], beyond: []).isEmpty)
        try await server.shutdown()
    }

    /// The server drops the kept-alive connection when the second request arrives on it, before
    /// any byte of an answer: the request goes out once more on a new connection.
    @Test(arguments: [false, true])
    func requestOnADeadReusedConnectionIsSentOnceMore(withBody: Bool) async throws {
        let server = try await LupineFaultServer.start(FaultPlan(.responseHead, .silence, faultedConnections: 0),
                                                       reuse: .dropLaterRequests)
        let session = Self.session()
        let first = await session.request(server.url("/first")).serializingString().response
        let second = withBody
            ? await session.upload(Data("body".utf8), to: server.url("/second")).serializingString().response
            : await session.request(server.url("/second")).serializingString().response

        #expect(first.value == "ok")
        #expect(second.error == nil)
        #expect(second.value == "ok")
        #expect(server.acceptedConnections == 2)
        #expect(server.requestsReceived == 3)
        await session.shutdown()
        #expect(await ClientSockets.leaked(toPorts: [server.port], beyond: []).isEmpty)
        try await server.shutdown()
    }

    /// Sent once more, not again and again: when the new connection dies as well, the request fails.
    @Test func requestIsSentOnceMoreOnlyOnce() async throws {
        let server = try await LupineFaultServer.start(FaultPlan(.responseHead, .silence, faultedConnections: 0),
                                                       reuse: .dropAllButFirstRequest)
        let session = Self.session()
        let first = await session.request(server.url("/first")).serializingString().response
        let second = await session.request(server.url("/second")).serializingString().response

        #expect(first.value == "ok")
        #expect(second.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(server.requestsReceived == 3)
        #expect(server.acceptedConnections == 2)
        await session.shutdown()
        #expect(await ClientSockets.leaked(toPorts: [server.port], beyond: []).isEmpty)
        try await server.shutdown()
    }

    /// Bytes past Content-Length (a whole second response) poison the connection: the next
    /// request never reads them as its answer, and the connection is not used again.
    @Test func bytesPastContentLengthAreNeverTheNextAnswer() async throws {
        let server = try await LupineFaultServer.start(FaultPlan(.responseHead, .silence, faultedConnections: 0),
                                                       reuse: .bytesPastContentLength)
        let session = Self.session()
        let first = await session.request(server.url("/first")).serializingString().response
        var answers: [String?] = []
        for index in 0..<3 {
            answers.append(await session.request(server.url("/next/\(index)")).serializingString().response.value)
        }

        #expect(first.value == "ok")
        #expect(answers == ["ok", "ok", "ok"])
        // The poisoned connection was dropped; the next requests share a new one.
        #expect(server.acceptedConnections == 2)
        await session.shutdown()
        #expect(await ClientSockets.leaked(toPorts: [server.port], beyond: []).isEmpty)
        try await server.shutdown()
    }
}
