import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// `DeflateRequestCompressor` sends bodies as zlib streams with `Content-Encoding: deflate`, which
/// LupineTestServer's `/inflate` checks and decompresses.
@Suite struct RequestCompressionTests {
    private struct InflateEcho: Decodable {
        let inflated: Bool
        let compressedLength: Int?
        let zlibHeader: String?
        let data: String
        let headers: [String: String]

        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    private static let document = ["greeting": String(repeating: "hello deflate ", count: 200)]

    private func send(_ interceptor: any RequestInterceptor,
                      headers: HTTPHeaders = [:]) async throws -> DataResponse<InflateEcho, AFError> {
        let server = try await testServer()
        return await AF.request(server.url("/inflate"), method: .post, parameters: Self.document,
                                encoder: JSONParameterEncoder.default, headers: headers, interceptor: interceptor)
            .serializingDecodable(InflateEcho.self).response
    }

    @Test func bodyIsSentAsZlibStreamWithContentEncodingDeflate() async throws {
        let response = try await send(.deflateCompressor)

        let echo = try #require(response.value)
        #expect(echo.inflated)
        #expect(echo.zlibHeader == "785e")
        #expect(echo.header("Content-Encoding") == "deflate")
        #expect(try JSONDecoder().decode([String: String].self, from: Data(echo.data.utf8)) == Self.document)
        // Repetitive text shrinks: what went on the wire is the compressed stream.
        #expect((echo.compressedLength ?? .max) < echo.data.utf8.count / 4)
        #expect(response.request?.value(forHTTPHeaderField: "Content-Encoding") == "deflate")
    }

    @Test func requestWithoutBodyIsLeftUnchanged() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/inflate"), interceptor: .deflateCompressor)
            .serializingDecodable(InflateEcho.self).response

        #expect(response.value?.inflated == false)
        #expect(response.value?.header("Content-Encoding") == nil)
        #expect(response.request?.httpBody == nil)
    }

    @Test func existingContentEncodingFailsAdaptationByDefault() async throws {
        let response = try await send(.deflateCompressor, headers: ["Content-Encoding": "identity"])

        guard case let .requestAdaptationFailed(error)? = response.error else {
            Issue.record("expected requestAdaptationFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error is DeflateRequestCompressor.DuplicateHeaderError)
        #expect(response.response == nil)
    }

    @Test func replaceBehaviourCompressesAndOverwritesContentEncoding() async throws {
        let response = try await send(.deflateCompressor(duplicateHeaderBehavior: .replace),
                                      headers: ["Content-Encoding": "identity"])

        #expect(response.value?.inflated == true)
        #expect(response.value?.header("Content-Encoding") == "deflate")
    }

    @Test func skipBehaviourSendsTheRequestAsItIs() async throws {
        let response = try await send(.deflateCompressor(duplicateHeaderBehavior: .skip),
                                      headers: ["Content-Encoding": "identity"])

        #expect(response.value?.inflated == false)
        #expect(response.value?.header("Content-Encoding") == "identity")
        #expect(try JSONDecoder().decode([String: String].self, from: Data((response.value?.data ?? "").utf8)) == Self.document)
    }

    @Test func declinedBodyIsSentUncompressed() async throws {
        let seenSizes = Locked<[Int]>([])
        let compressor = DeflateRequestCompressor { body in
            seenSizes.withValue { $0.append(body.count) }
            return body.count > 1_000_000
        }
        let response = try await send(compressor)

        #expect(response.value?.inflated == false)
        #expect(response.value?.header("Content-Encoding") == nil)
        #expect(seenSizes.current == [try JSONEncoder().encode(Self.document).count])
    }

    @Test func declinedBodyWithContentEncodingIsSentEvenWithErrorBehaviour() async throws {
        let compressor = DeflateRequestCompressor(duplicateHeaderBehavior: .error) { _ in false }
        let response = try await send(compressor, headers: ["Content-Encoding": "identity"])

        #expect(response.error == nil)
        #expect(response.value?.inflated == false)
        #expect(response.value?.header("Content-Encoding") == "identity")
    }

    @Test func compressedBodyEndsWithTheBigEndianAdler32OfTheOriginal() throws {
        let original = Data("Wikipedia".utf8)
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1/")))
        request.httpBody = original
        let result = Locked<Result<URLRequest, any Error>?>(nil)
        DeflateRequestCompressor().adapt(request, for: AF) { outcome in result.withValue { $0 = outcome } }

        let body = try #require(try result.current?.get().httpBody)
        #expect(Array(body.prefix(2)) == [0x78, 0x5E])
        // Adler-32 of "Wikipedia" is 0x11E60398 (the example of the algorithm's description).
        #expect(Array(body.suffix(4)) == [0x11, 0xE6, 0x03, 0x98])
    }

    @Test func emptyBodyIsCompressedToAValidStream() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/inflate"), method: .post,
                                        interceptor: .deflateCompressor,
                                        requestModifier: { $0.httpBody = Data() })
            .serializingDecodable(InflateEcho.self).response

        #expect(response.value?.inflated == true)
        #expect(response.value?.data == "")
    }
}
