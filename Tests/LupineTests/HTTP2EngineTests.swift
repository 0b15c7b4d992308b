import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// HTTP/2 through the engine, against LupineHTTP2TestServer (TLS, ALPN h2 only): concurrent
/// requests are multiplexed as streams of one connection, each driven by the same exchange
/// handler as HTTP/1.1 (decompression and its limit included), and a stream the server resets
/// fails alone.
@Suite struct HTTP2EngineTests {
    private func server() async throws -> LupineHTTP2TestServer {
        try await LupineHTTP2TestServer.start(tls: LupineTestServerTLS(certificateChainFile: TLSFixture.path("chain.pem"),
                                                                       privateKeyFile: TLSFixture.path("leaf-key.pem")))
    }

    private func session(engine: ConnectionEngine = ConnectionEngine()) throws -> Session {
        Session(transport: engine,
                serverTrustManager: ServerTrustManager(evaluators: [
                    "127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: [try TLSFixture.certificate("ca.der")],
                                                                  acceptSelfSignedCertificates: true),
                ]))
    }

    @Test func concurrentRequestsAreStreamsOfOneConnection() async throws {
        let server = try await server()
        let session = try session()
        let responses = await withTaskGroup(of: (Int?, String?).self) { group in
            for index in 0..<8 {
                group.addTask {
                    let response = await session.request(server.url("/delay/0.2?n=\(index)")).serializingData().response
                    return (response.response?.statusCode, response.response?.value(forHTTPHeaderField: "x-stream-id"))
                }
            }
            return await group.reduce(into: [(Int?, String?)]()) { $0.append($1) }
        }
        try await server.shutdown()

        #expect(responses.map(\.0) == Array(repeating: 200, count: 8))
        #expect(Set(responses.compactMap(\.1)).count == 8)
        #expect(server.acceptedConnections == 1)
        #expect(server.openedStreams == 8)
    }

    @Test func sequentialRequestsShareTheConnection() async throws {
        let server = try await server()
        let session = try session()
        for _ in 0..<3 {
            let response = await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).response
            #expect(response.error == nil)
        }
        try await server.shutdown()

        #expect(server.acceptedConnections == 1)
        #expect(server.openedStreams == 3)
    }

    @Test func streamResetMidBodyFailsThatRequestAndTheConnectionGoesOn() async throws {
        let server = try await server()
        let session = try session()
        let reset = await session.request(server.url("/h2/reset-mid-body")).serializingData().response
        let after = await session.request(server.url("/get")).serializingData().response
        try await server.shutdown()

        #expect(reset.response?.statusCode == 200)
        #expect(reset.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(reset.error?.underlyingError?.localizedDescription.contains("127.0.0.1:\(server.port)") == true)
        #expect(after.response?.statusCode == 200)
        #expect(server.acceptedConnections == 1)
    }

    /// swift-nio-http2's HTTP/1 codec adds `transfer-encoding: chunked` to a response that announces
    /// no length; an HTTP/2 response has none (RFC 9113 section 8.2.2), and the caller sees none
    /// (seen against nginx over h2).
    @Test func responseWithoutContentLengthShowsNoTransferEncoding() async throws {
        let server = try await server()
        let session = try session()
        let response = await session.request(server.url("/h2/no-content-length")).serializingString().response
        try await server.shutdown()

        #expect(response.value == "no length announced")
        let fields = response.response?.allHeaderFields.keys.compactMap { $0 as? String } ?? []
        #expect(fields.contains { $0.lowercased() == "content-type" })
        #expect(!fields.contains { $0.lowercased() == "transfer-encoding" }, "\(fields)")
        #expect(response.response?.value(forHTTPHeaderField: "Transfer-Encoding") == nil)
    }

    /// Each coding (the route and its bomb): decoded on a stream as on an HTTP/1.1 connection.
    @Test(arguments: [("/gzip", "/gzip-bomb"), ("/brotli", "/brotli-bomb"), ("/zstd", "/zstd-bomb"),
                      ("/encoded?codings=gzip,br", "/deflate-bomb")])
    func encodedBodyIsDecodedOnAStreamAndABombFails(_ route: String, bombRoute: String) async throws {
        let server = try await server()
        let session = try session()
        let encoded = await session.request(server.url(route)).serializingData().response
        let bomb = await session.request(server.url("\(bombRoute)?size=64")).serializingData().response
        try await server.shutdown()

        #expect(encoded.error == nil)
        #expect(encoded.data.flatMap { try? JSONSerialization.jsonObject(with: $0) } != nil)
        #expect(bomb.error?.sessionTaskURLErrorCode == .cannotDecodeContentData)
    }
}
