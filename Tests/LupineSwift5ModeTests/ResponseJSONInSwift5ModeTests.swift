import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// `responseJSON` used as code written for Alamofire uses it, built in the Swift 5 language mode
/// as Alamofire's own tests are: the response kept in a `DataResponse<Any, AFError>?` variable that
/// the handler sets, and `AFDataResponse<Any>` / `AFDownloadResponse<Any>` in function signatures.
/// That this target compiles is half of the test.
@Suite struct ResponseJSONInSwift5ModeTests {
    private struct Form: Decodable {
        let args: [String: String]?
        let form: [String: String]?
    }

    @Test func getResponseIsKeptAsADataResponseOfAny() async throws {
        let server = try await LupineTestServer.start()
        let response = await AlamofireStyleJSON.calls.request(server.url("/get"), method: .get, parameters: ["foo": "bar"])
        try await server.shutdown()

        #expect(response?.request != nil)
        #expect(response?.response?.statusCode == 200)
        #expect(response?.data != nil)
        #expect(response?.error == nil)
        let object = response?.value as? [String: Any]
        #expect(object?["args"] as? [String: String] == ["foo": "bar"])
    }

    @Test func postResponseIsKeptAsADataResponseOfAny() async throws {
        let server = try await LupineTestServer.start()
        let response = await AlamofireStyleJSON.calls.request(server.url("/post"), method: .post, parameters: ["foo": "bar"])
        try await server.shutdown()

        #expect(response?.error == nil)
        let object = response?.value as? [String: Any]
        #expect(object?["form"] as? [String: String] == ["foo": "bar"])
    }

    /// Alamofire's `String.invalidURL`: it parses, but names no host to send it to.
    @Test func requestThatCannotBeSentFailsAsASessionTaskError() async {
        let response = await AlamofireStyleJSON.calls.request("invalid.url", method: .get, parameters: ["foo": "bar"])

        #expect(response?.request != nil)
        #expect(response?.response == nil)
        #expect(response?.data == nil)
        #expect(response?.value == nil)
        #expect(response?.error?.isSessionTaskError == true)
    }

    @Test func downloadResponseGoesThroughAFunctionThatNamesItsType() async throws {
        let server = try await LupineTestServer.start()
        let summary = await AlamofireStyleJSON.calls.download(server.url("/json"))
        try await server.shutdown()

        #expect(summary == "slideshow")
    }
}

/// The deprecated calls, made inside deprecated methods (where Swift does not warn about deprecated
/// API) and reached through a protocol whose requirements are not deprecated, so that the target
/// builds without warnings.
protocol AlamofireStyleJSONCalls {
    func request(_ url: String, method: HTTPMethod, parameters: [String: String]) async -> DataResponse<Any, AFError>?
    func download(_ url: String) async -> String?
}

enum AlamofireStyleJSON {
    static let calls: any AlamofireStyleJSONCalls = Caller()

    private struct Caller: AlamofireStyleJSONCalls {
        @available(*, deprecated, message: "Exercises deprecated API.")
        func request(_ url: String, method: HTTPMethod, parameters: [String: String]) async -> DataResponse<Any, AFError>? {
            let session = Session()
            var response: DataResponse<Any, AFError>?
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                session.request(url, method: method, parameters: parameters).responseJSON { resp in
                    response = resp
                    continuation.resume()
                }
            }
            return response
        }

        @available(*, deprecated, message: "Exercises deprecated API.")
        func download(_ url: String) async -> String? {
            let session = Session()
            return await withCheckedContinuation { continuation in
                session.download(url).responseJSON { response in
                    continuation.resume(returning: Self.firstKey(of: response))
                }
            }
        }

        private static func firstKey(of response: AFDownloadResponse<Any>) -> String? {
            if let fileURL = response.fileURL { try? FileManager.default.removeItem(at: fileURL) }
            return (response.value as? [String: Any])?.keys.sorted().first
        }
    }
}
