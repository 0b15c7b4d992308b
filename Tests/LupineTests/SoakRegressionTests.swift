import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// What `lupine soak` found, one test per finding.
@Suite struct SoakRegressionTests {
    /// Waits (polling, up to 5 s) until `released()` is true.
    private static func eventually(_ released: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while !released() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// A request whose connection failed while it waited in the pool was held, with its task and
    /// response, by the pool's wait timer until the timer fired (60 s by default): at a steady rate
    /// of refused connections, memory grew by about 5 KiB per request for a minute's worth of them.
    @Test func requestWhoseConnectionWasRefusedIsReleasedAtOnce() async throws {
        let port = try closedLoopbackPort()
        let session = Session()
        weak var released: DataRequest?
        do {
            let request = session.request("http://127.0.0.1:\(port)/get")
            released = request
            let response = await request.serializingData().response
            #expect(response.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        }
        #expect(await Self.eventually { released == nil })
    }

    /// Many concurrent requests over one HTTP/2 connection: each one ends with its response.
    ///
    /// Known issue (#14, engine), seen with 32 streams at once against swift-nio-http2's server:
    /// about one request in ten fails with networkConnectionLost; the streams in flight see
    /// StreamClosed(CANCEL), the connection then IOOnClosedConnection, and the pool opens a new
    /// one (3 or more connections for 600 requests). Before the rel branch's fixes, those requests
    /// waited for their timeout instead. A likely cause to check: the engine closes each stream's
    /// channel as soon as its response ends, which resets a stream swift-nio-http2 has not closed
    /// yet, and servers count resets.
    @Test func concurrentRequestsOverHTTP2AllSucceed() async throws {
        let identity = try LupineTestServerTLS(certificateChainFile: TLSFixture.path("chain.pem"),
                                               privateKeyFile: TLSFixture.path("leaf-key.pem"))
        let server = try await LupineHTTP2TestServer.start(tls: identity)
        let evaluator = SharedTrustEvaluator(TestCATrustEvaluator(anchors: [try TLSFixture.certificate("ca.der")]))
        let session = Session(serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": evaluator]))
        let total = 300
        let outcomes = await withTaskGroup(of: String.self) { group in
            var next = 0
            var outcomes: [String: Int] = [:]
            func add() {
                let url = server.url("/get?i=\(next)")
                next += 1
                group.addTask {
                    let response = await session.request(url, requestModifier: { $0.timeoutInterval = 3 }).validate()
                        .serializingData().response
                    return response.error.map { "\($0.sessionTaskURLErrorCode.map { "\($0.rawValue)" } ?? "\($0)")" } ?? "ok"
                }
            }
            for _ in 0..<32 { add() }
            while let outcome = await group.next() {
                outcomes[outcome, default: 0] += 1
                if next < total { add() }
            }
            return outcomes
        }
        await session.shutdown()
        try await server.shutdown()

        withKnownIssue("#14: concurrent HTTP/2 requests fail with networkConnectionLost as their connection ends") {
            #expect(outcomes == ["ok": total])
            #expect(server.acceptedConnections == 1)
        }
    }
}
