import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// The life of an HTTP/2 connection against a server that behaves like real ones: connections
/// recycled with GOAWAY (with and without streams open), streams refused and reset with every
/// code, interim responses, trailers, slow and stalled streams, idle connections and PING.
///
/// Each request has a request timeout well above what it needs, so that a hang fails the test as
/// `timedOut` instead of passing slowly.
@Suite struct HTTP2LifecycleTests {
    static func server(_ behaviour: HTTP2ServerBehaviour = HTTP2ServerBehaviour()) async throws -> LupineHTTP2TestServer {
        try await LupineHTTP2TestServer.start(tls: LupineTestServerTLS(certificateChainFile: TLSFixture.path("chain.pem"),
                                                                       privateKeyFile: TLSFixture.path("leaf-key.pem")),
                                              behaviour: behaviour)
    }

    static func session(_ configuration: ConnectionEngine.Configuration = ConnectionEngine.Configuration()) throws -> Session {
        Session(transport: ConnectionEngine(configuration: configuration),
                serverTrustManager: ServerTrustManager(evaluators: [
                    "127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [try TLSFixture.certificate("ca.der")],
                                                                  acceptSelfSignedCertificates: true),
                ]))
    }

    private static func get(_ session: Session, _ url: String, timeout: TimeInterval = 10) async -> DataResponse<Data, AFError> {
        await session.request(url, requestModifier: { $0.timeoutInterval = timeout }).serializingData().response
    }

    // MARK: GOAWAY

    /// Hypercorn with `keep_alive_max_requests = 5` and a slow response open on the connection:
    /// twelve sequential GETs once waited for the old connection until their timeout.
    @Test func goAwayWithAStreamOpenMovesLaterRequestsToANewConnectionAtOnce() async throws {
        let server = try await Self.server(HTTP2ServerBehaviour(maximumStreamsPerConnection: 5))
        let session = try Self.session()
        let slow = Task { await Self.get(session, server.url("/drip?numbytes=4&duration=2")) }
        var statuses: [Int?] = []
        for index in 0..<12 {
            let response = await Self.get(session, server.url("/get?n=\(index)"))
            #expect(response.error == nil, "request \(index): \(String(describing: response.error))")
            statuses.append(response.response?.statusCode)
        }
        let slowResponse = await slow.value

        #expect(statuses == Array(repeating: 200, count: 12))
        #expect(slowResponse.error == nil)
        #expect(slowResponse.data?.count == 4)
        // 13 streams, 5 per connection.
        #expect(server.acceptedConnections == 3)
        // The connections that went away were closed by the client once drained (the server keeps them).
        #expect(await waitUntil { server.openConnections == 1 })
        try await server.shutdown()
    }

    @Test func goAwayWithNoStreamOpenClosesTheConnectionAndTheNextRequestOpensAnother() async throws {
        let server = try await Self.server(HTTP2ServerBehaviour(maximumStreamsPerConnection: 1))
        let session = try Self.session()
        for index in 0..<3 {
            let response = await Self.get(session, server.url("/get?n=\(index)"))
            #expect(response.response?.statusCode == 200)
            #expect(response.response?.value(forHTTPHeaderField: "x-connection") == "\(index)")
        }
        #expect(server.goAwaysSent == 3)
        #expect(await waitUntil { server.openConnections == 0 })
        try await server.shutdown()
    }

    @Test func aStreamAtOrBelowTheLastStreamIDOfAGoAwayFinishes() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let response = await Self.get(session, server.url("/h2/goaway?last=this&delay=0.3"))
        let next = await Self.get(session, server.url("/get"))

        #expect(response.error == nil)
        #expect(response.response?.value(forHTTPHeaderField: "x-connection") == "0")
        #expect(next.response?.value(forHTTPHeaderField: "x-connection") == "1")
        try await server.shutdown()
    }

    /// RFC 9113 section 6.8: a request on a stream above the GOAWAY's last stream id was not
    /// processed, and may be sent again on a new connection whatever its method.
    @Test func aPOSTRefusedByGoAwayIsSentAgainOnANewConnection() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let response = await session.request(server.url("/h2/goaway?last=previous"), method: .post,
                                             parameters: ["name": "value"], encoding: JSONEncoding.default,
                                             requestModifier: { $0.timeoutInterval = 10 })
            .serializingString().response

        #expect(response.error == nil)
        #expect(response.value == "ok\n")
        #expect(response.response?.value(forHTTPHeaderField: "x-connection") == "1")
        #expect(server.goAwaysSent == 1)
        try await server.shutdown()
    }

    // MARK: RST_STREAM

    @Test func aPOSTRefusedWithREFUSED_STREAMIsSentAgain() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let response = await session.request(server.url("/h2/rst/REFUSED_STREAM?times=1"), method: .post,
                                             requestModifier: { $0.timeoutInterval = 10 })
            .serializingString().response

        #expect(response.value == "ok\n")
        #expect(server.hits(withPrefix: "/h2/rst/REFUSED_STREAM") == 2)
        try await server.shutdown()
    }

    @Test func aRequestRefusedEveryTimeFailsAfterThreeMoreTries() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let response = await Self.get(session, server.url("/h2/rst/REFUSED_STREAM"))

        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(response.error?.underlyingError?.localizedDescription.contains("without processing it") == true)
        #expect(server.hits(withPrefix: "/h2/rst/REFUSED_STREAM") == 1 + EngineExchange.unprocessedRetryLimit)
        try await server.shutdown()
    }

    /// Each RST_STREAM code before any response, as the caller sees it.
    @Test(arguments: [
        ("NO_ERROR", URLError.Code.networkConnectionLost), ("PROTOCOL_ERROR", .badServerResponse),
        ("INTERNAL_ERROR", .networkConnectionLost), ("FLOW_CONTROL_ERROR", .badServerResponse),
        ("SETTINGS_TIMEOUT", .badServerResponse), ("STREAM_CLOSED", .badServerResponse),
        ("FRAME_SIZE_ERROR", .badServerResponse), ("CANCEL", .networkConnectionLost),
        ("COMPRESSION_ERROR", .badServerResponse), ("CONNECT_ERROR", .networkConnectionLost),
        ("ENHANCE_YOUR_CALM", .networkConnectionLost), ("INADEQUATE_SECURITY", .secureConnectionFailed),
        ("HTTP_1_1_REQUIRED", .networkConnectionLost),
    ])
    func aStreamResetWithACodeFailsWithAClearError(code: String, expected: URLError.Code) async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let reset = await Self.get(session, server.url("/h2/rst/\(code)"))
        let after = await Self.get(session, server.url("/get"))

        #expect(reset.error?.sessionTaskURLErrorCode == expected)
        let description = reset.error?.underlyingError?.localizedDescription ?? ""
        #expect(description.contains("RST_STREAM \(code)"), "\(description)")
        #expect(description.contains("127.0.0.1:\(server.port)"))
        // The connection the other streams share goes on.
        #expect(after.response?.statusCode == 200)
        #expect(server.acceptedConnections == 1)
        try await server.shutdown()
    }

    @Test func aStreamResetAfterTheResponseHeadFailsWithTheHeadDelivered() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let reset = await Self.get(session, server.url("/h2/rst/INTERNAL_ERROR?after=head"))
        try await server.shutdown()

        #expect(reset.response?.statusCode == 200)
        #expect(reset.error?.sessionTaskURLErrorCode == .networkConnectionLost)
    }

    /// RFC 9113 section 8.1: a server that has sent a whole response may end the upload it does
    /// not need with RST_STREAM NO_ERROR; the response stands.
    @Test func aWholeResponseFollowedByRST_STREAMNoErrorSucceedsDuringAnUpload() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let body = Data(repeating: 0x61, count: 4 << 20)
        let response = await session.upload(body, to: server.url("/h2/rst/NO_ERROR?after=end"),
                                            requestModifier: { $0.timeoutInterval = 10 })
            .serializingString().response
        try await server.shutdown()

        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.value == "ok\n")
    }

    // MARK: Interim responses, trailers, slow and stalled streams

    @Test func interimResponsesBeforeTheResponseAreSkipped() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let response = await session.request(server.url("/fault/informational?code=103&count=2"),
                                             requestModifier: { $0.timeoutInterval = 5 }).serializingString().response
        try await server.shutdown()

        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.response?.statusCode == 200)
        #expect(response.value == "ok\n")
    }

    @Test func aResponseWithTrailersIsDeliveredWhole() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let response = await session.request(server.url("/fault/trailers"), requestModifier: { $0.timeoutInterval = 5 })
            .serializingString().response
        let after = await Self.get(session, server.url("/get"))
        try await server.shutdown()

        #expect(response.value == "ok\n")
        #expect(after.response?.statusCode == 200)
        #expect(server.acceptedConnections == 1)
    }

    /// Twenty bytes over 4 s, 200 ms apart, with a 3 s timeout: a timeout counted over the whole
    /// stream would fire a second before its end, while each gap leaves 2.8 s of margin for a
    /// loaded machine.
    @Test func aThrottledStreamWithGapsShorterThanTheTimeoutSucceeds() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        // The connection (and its TLS handshake) first, outside the short timeout.
        _ = await Self.get(session, server.url("/get"))
        let response = await Self.get(session, server.url("/drip?numbytes=20&duration=4"), timeout: 3)
        try await server.shutdown()

        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.data?.count == 20)
    }

    @Test func aStalledStreamTimesOutAloneWhileTheConnectionServesOthers() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        _ = await Self.get(session, server.url("/get"))
        let stalled = Task { await Self.get(session, server.url("/fault/stall"), timeout: 1) }
        let other = await Self.get(session, server.url("/delay/0.2"))
        let stalledResponse = await stalled.value
        let after = await Self.get(session, server.url("/get"))
        try await server.shutdown()

        #expect(stalledResponse.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(other.response?.statusCode == 200)
        #expect(after.response?.statusCode == 200)
        #expect(server.acceptedConnections == 1)
    }

    // MARK: Streams and slots

    /// Streams that fail give their slot back: with one stream allowed at a time, requests that
    /// are reset, refused and answered in a row all finish.
    @Test func failedStreamsGiveTheirSlotBack() async throws {
        let server = try await Self.server(HTTP2ServerBehaviour(maximumConcurrentStreams: 1))
        let session = try Self.session()
        let paths = ["/h2/rst/CANCEL", "/get", "/h2/rst/INTERNAL_ERROR?after=head", "/h2/rst/REFUSED_STREAM?times=1", "/get",
                     "/h2/reset-mid-body", "/get"]
        // For each request: nil when it succeeded, else the code it failed with.
        let outcomes = await withTaskGroup(of: (Int, URLError.Code?).self) { group in
            for (index, path) in paths.enumerated() {
                group.addTask {
                    let error = await Self.get(session, server.url(path)).error
                    return (index, error.map { $0.sessionTaskURLErrorCode ?? .unknown })
                }
            }
            return await group.reduce(into: [Int: URLError.Code?]()) { $0[$1.0] = $1.1 }
        }
        try await server.shutdown()

        #expect(outcomes.count == paths.count)
        #expect(!outcomes.values.contains { $0 == .timedOut }, "\(outcomes)")
        for index in [1, 3, 4, 6] {
            #expect(outcomes[index] == .some(nil), "\(paths[index]): \(String(describing: outcomes[index]))")
        }
    }

    // MARK: Idle connections and PING

    @Test func anIdleHTTP2ConnectionIsClosedAfterTheIdleTimeout() async throws {
        let server = try await Self.server()
        let session = try Self.session(ConnectionEngine.Configuration(idleConnectionTimeout: 0.3))
        let response = await Self.get(session, server.url("/get"))
        #expect(response.response?.statusCode == 200)
        #expect(await waitUntil { server.openConnections == 0 })

        let next = await Self.get(session, server.url("/get"))
        #expect(next.response?.statusCode == 200)
        #expect(server.acceptedConnections == 2)
        try await server.shutdown()
    }

    @Test func aConfiguredPingIntervalSendsPings() async throws {
        let server = try await Self.server()
        let session = try Self.session(ConnectionEngine.Configuration(http2PingInterval: 0.1))
        let response = await Self.get(session, server.url("/delay/0.5"))
        #expect(response.response?.statusCode == 200)
        #expect(await waitUntil { server.pingsReceived >= 3 })
        try await server.shutdown()
    }

    @Test func noPingIsSentByDefault() async throws {
        let server = try await Self.server()
        let session = try Self.session()
        let response = await Self.get(session, server.url("/delay/0.5"))
        try await server.shutdown()

        #expect(response.response?.statusCode == 200)
        #expect(server.pingsReceived == 0)
    }
}
