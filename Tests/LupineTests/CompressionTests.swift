import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// gzip and deflate bodies arrive decoded, as from URLSession, with `Content-Encoding` still on the
/// response; a compression bomb fails fast instead of inflating into memory.
@Suite struct CompressionTests {
    private struct CompressedEcho: Decodable {
        let gzipped: Bool?
        let deflated: Bool?
        let method: String
        let headers: [String: String]
    }

    @Test func gzipBodyIsDecodedAndContentEncodingStaysVisible() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/gzip")).serializingDecodable(CompressedEcho.self).response

        #expect(response.error == nil)
        #expect(response.value?.gzipped == true)
        #expect(response.value?.method == "GET")
        #expect(response.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(response.response?.headers["Content-Encoding"] == "gzip")
    }

    @Test func deflateBodyIsDecodedAndContentEncodingStaysVisible() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/deflate")).serializingDecodable(CompressedEcho.self).response

        #expect(response.error == nil)
        #expect(response.value?.deflated == true)
        #expect(response.response?.value(forHTTPHeaderField: "Content-Encoding") == "deflate")
    }

    @Test func defaultAcceptEncodingAdvertisesOnlyDecodedEncodings() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/gzip")).serializingDecodable(CompressedEcho.self).response

        let acceptEncoding = response.value?.headers.first { $0.key.lowercased() == "accept-encoding" }?.value
        #expect(acceptEncoding == "br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7")
    }

    @Test func bodyThatIsNotTheAnnouncedGzipFailsWithCannotDecodeContentData() async throws {
        let server = try await testServer()
        let session = Session()
        // A plain JSON body labelled gzip.
        let response = await session.request(server.url("/response-headers?Content-Encoding=gzip")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .cannotDecodeContentData)
        #expect(response.response?.statusCode == 200)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func unknownContentEncodingIsDeliveredUndecoded() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/response-headers?Content-Encoding=x-unknown"))
            .serializingDecodable([String: String].self).response

        #expect(response.error == nil)
        #expect(response.value == ["Content-Encoding": "x-unknown"])
        #expect(response.response?.value(forHTTPHeaderField: "Content-Encoding") == "x-unknown")
    }

    /// 1 GiB of zeros in about 1 MiB of gzip: the decompression ratio limit stops it long before the
    /// body is inflated, so the process grows by far less than the 64 MiB bound.
    @Test func gzipBombFailsWithCannotDecodeContentDataWithoutGrowingMemory() async throws {
        try await MemoryMeasurement.measuring { try await gzipBombBody() }
    }

    private func gzipBombBody() async throws {
        let server = try await testServer()
        let session = Session()
        // The server builds the compressed body once; ask for it first so its cost is not measured.
        _ = await session.request(server.url("/gzip-bomb?size=1024"), requestModifier: { $0.timeoutInterval = 30 })
            .serializingData().response
        // The process is shared with the tests running beside this one, and a neighbour's
        // allocations show up as growth here (72 MB was seen on a loaded machine). A body decoded
        // whole grows it by 1 GiB on every try: the smallest growth of up to three tries counts.
        var smallestGrowth = Int.max
        for _ in 0..<3 where smallestGrowth >= 64 << 20 {
            let residentBefore = residentMemoryBytes()
            let response = await session.request(server.url("/gzip-bomb?size=1024")).serializingData().response
            let residentAfter = residentMemoryBytes()

            #expect(response.error?.sessionTaskURLErrorCode == .cannotDecodeContentData)
            // Stopped by the ratio limit, not by running out of time or memory.
            #expect((response.error?.underlyingError as? URLError)?.localizedDescription.contains("ratio limit") == true)
            guard let residentBefore, let residentAfter else { break }
            smallestGrowth = min(smallestGrowth, residentAfter - residentBefore)
        }
        if smallestGrowth != Int.max {
            #expect(smallestGrowth < 64 << 20)
        }
        #expect(await session.performsNormalRequest(on: server))
    }

    /// A body that inflates to far more than one output chunk arrives whole.
    @Test func largeGzipBodyIsDecodedWhole() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/gzip?padding=300000")).serializingData().response

        #expect(response.error == nil)
        let document = response.data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        #expect((document?["padding"] as? String)?.count ?? 0 >= 300_000)
        #expect(document?["gzipped"] as? Bool == true)
    }

    /// A gzip stream cut short, then one with bytes after its end: neither is taken for a whole
    /// body, and the connection that carried them is not used again.
    @Test func truncatedOrTrailedGzipFailsWithCannotDecodeContentData() async throws {
        let server = try await testServer()
        let session = Session()

        let truncated = await session.request(server.url("/gzip?truncate=6")).serializingData().response
        let trailed = await session.request(server.url("/gzip?trailing=junk")).serializingData().response

        #expect(truncated.error?.sessionTaskURLErrorCode == .cannotDecodeContentData)
        #expect(trailed.error?.sessionTaskURLErrorCode == .cannotDecodeContentData)
        #expect(await session.performsNormalRequest(on: server))
    }

    /// The coding is matched without regard to case, as SwiftNIO's decoder did.
    @Test func contentEncodingIsMatchedIgnoringCase() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/gzip?encoding=GZIP")).serializingDecodable(CompressedEcho.self).response

        #expect(response.error == nil)
        #expect(response.value?.gzipped == true)
    }

    /// A HEAD response names the encoding of a body it does not carry: nothing is decoded.
    @Test func headResponseWithContentEncodingSucceedsWithoutBody() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/gzip"), method: .head).serializingData(emptyRequestMethods: [.head]).response

        #expect(response.error == nil)
        #expect(response.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(response.data?.isEmpty ?? true)
    }
}
