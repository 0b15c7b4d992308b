import Foundation
import Lupine
import LupineTestServer
import Testing

/// `Request.responseHead`: the final response's status line and fields as they were received.
@Suite struct ResponseHeadTests {
    @Test func keepsOrderCaseAndRepeatedFieldsThatHTTPURLResponseMerges() async throws {
        let server = try await testServer()
        // Not Set-Cookie: AF's cookie storage is shared by every test of the process, and a
        // cookie for 127.0.0.1 would reach the other tests' servers (cookies ignore the port).
        let request = AF.request(server.url("/response-headers?X-Repeated=a&X-MiXeD-Case=one&x-repeated=b"))
        let response = await request.serializingData().response
        let head = try #require(request.responseHead)
        #expect(head.statusCode == 200)
        #expect(head.httpVersion == "HTTP/1.1")
        let ours = head.headerFields.filter { ["x-repeated", "x-mixed-case"].contains($0.name.lowercased()) }
        #expect(ours.map(\.description) == ["X-Repeated: a", "X-MiXeD-Case: one", "x-repeated: b"])
        // What HTTPURLResponse keeps instead: one value per name.
        #expect(response.response?.headers["X-Repeated"] == "a, b")
    }

    @Test func isTheHeadOfTheFinalResponseAfterRedirects() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/redirect/2"))
        _ = await request.serializingData().response
        let head = try #require(request.responseHead)
        #expect(head.statusCode == 200)
        #expect(!head.headerFields.contains { $0.name.lowercased() == "location" })
    }

    @Test func isNilWithoutAResponse() async throws {
        let request = AF.request("http://127.0.0.1:1/get")
        _ = await request.serializingData().response
        #expect(request.responseHead == nil)
    }

    @Test func isSetBeforeTheFirstBodyBytesOfAStream() async throws {
        let server = try await testServer()
        let request = AF.streamRequest(server.url("/stream/3"))
        let seenInHandler = Locked<TransportResponseHead?>(nil)
        request.onHTTPResponse { [weak request] _ in seenInHandler.withValue { $0 = request?.responseHead } }
        for await _ in request.streamTask().streamingData() {}
        #expect(seenInHandler.current?.statusCode == 200)
        #expect(seenInHandler.current?.headerFields.isEmpty == false)
    }
}
