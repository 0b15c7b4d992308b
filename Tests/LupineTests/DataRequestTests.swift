import Foundation
import Lupine
import LupineTestServer
import Testing

@Suite struct DataRequestTests {
    @Test func getDecodesEchoedQueryAndDefaultHeaders() async throws {
        let server = try await testServer()
        let echo = try await AF.request(server.url("/get"), parameters: ["name": "lupine", "n": 2])
            .serializingDecodable(HTTPBinResponse.self).value
        #expect(echo.args["name"] == .string("lupine"))
        #expect(echo.args["n"] == .string("2"))
        #expect(echo.method == "GET")
        #expect(echo.header("User-Agent")?.hasSuffix("Lupine/\(AFInfo.version)") == true)
        #expect(echo.header("Accept-Encoding") == "br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7")
    }

    @Test func completionHandlerRunsWithoutMainQueueOnLinux() async throws {
        let server = try await testServer()
        let response: AFDataResponse<String> = await withCheckedContinuation { continuation in
            AF.request(server.url("/get")).responseString { continuation.resume(returning: $0) }
        }
        #expect(response.response?.statusCode == 200)
        #expect(response.value?.contains("\"method\"") == true)
        #expect(response.timeline.totalDuration > 0)
    }

    @Test func postSendsFormEncodedBody() async throws {
        let server = try await testServer()
        let echo = try await AF.request(server.url("/post"), method: .post, parameters: ["a": "1 2", "b": "x&y"])
            .serializingDecodable(HTTPBinResponse.self).value
        #expect(echo.form["a"] == .string("1 2"))
        #expect(echo.form["b"] == .string("x&y"))
        #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }
}
