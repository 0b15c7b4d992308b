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
        #expect(acceptEncoding == "gzip;q=1.0, deflate;q=0.9")
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
        let server = try await testServer()
        let session = Session()
        // The server builds the compressed body once; ask for it first so its cost is not measured.
        _ = await session.request(server.url("/gzip-bomb?size=1024"), requestModifier: { $0.timeoutInterval = 30 })
            .serializingData().response
        let residentBefore = residentMemoryBytes()

        var response: AFDataResponse<Data>?
        let elapsed = await secondsElapsed {
            response = await session.request(server.url("/gzip-bomb?size=1024")).serializingData().response
        }
        let residentAfter = residentMemoryBytes()

        #expect(response?.error?.sessionTaskURLErrorCode == .cannotDecodeContentData)
        #expect(elapsed < 5)
        if let residentBefore, let residentAfter {
            #expect(residentAfter - residentBefore < 64 << 20)
        }
        #expect(await session.performsNormalRequest(on: server))
    }
}
