import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// The pool's key names the origin as the URL does, whatever the case of its host and whether the
/// host is written with percent escapes: such requests share their connections.
@Suite struct ConnectionKeyTests {
    private func key(_ url: String) throws -> ConnectionKey {
        let url = try #require(URL(string: url))
        return try #require(ConnectionKey.make(for: TransportRequest(url: url, method: .get, headerFields: []))).key
    }

    @Test func hostIsLowercasedAndItsEscapesDecoded() throws {
        #expect(try key("http://Example.COM/a").host == "example.com")
        #expect(try key("http://ex%61mple.com/b").host == "example.com")
        #expect(try key("http://EX%41MPLE.com:80/c") == key("http://example.com/d"))
        #expect(try key("https://example.com/") != key("http://example.com/"))
    }

    @Test func ipv6HostLosesItsBrackets() throws {
        let key = try key("http://[::1]:8080/")
        #expect(key.host == "::1")
        #expect(key.hostIsIPv6)
        #expect(key.authority == "[::1]:8080")
    }

    @Test func requestsToOneOriginWrittenInOtherCaseShareAConnection() async throws {
        let server = try await LupineTestServer.start()
        let engine = ConnectionEngine()
        for host in ["localhost", "LOCALHOST", "LocalHost"] {
            let recorder = EngineBodyTests.Recorder()
            let url = try #require(URL(string: "http://\(host):\(server.port)/get"))
            _ = engine.execute(TransportRequest(url: url, method: .get, headerFields: []), events: recorder)
            #expect(await waitUntil { recorder.isComplete })
            #expect(recorder.statusCode == 200)
        }

        #expect(server.acceptedConnections == 1)
        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }
        try await server.shutdown()
    }
}
