import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import Testing

/// `responseJSON` and `JSONResponseSerializer`, deprecated in Alamofire 5.12 and kept for older code.
///
/// This target is built in the Swift 6 language mode. There, as with Alamofire, code can name
/// `responseJSON`'s types (`AFDataResponse<Any>` in a closure or a signature) but not read their
/// members (`Any` is not `Sendable`): the values are read through `JSONResponseSerializer`, whose
/// value is `any Sendable`, and `responseJSON`'s responses are described. LupineSwift5ModeTests
/// reads them as Alamofire's own tests do, in the Swift 5 mode.
@Suite struct ResponseJSONTests {
    @Test func responseJSONHandsOverAlamofiresTypes() async throws {
        let server = try await testServer()
        let data = await DeprecatedJSON.responseJSONDescription(Session(), server.url("/json"))
        let download = await DeprecatedJSON.downloadResponseJSONDescription(Session(), server.url("/json"))
        #expect(data.hasPrefix("success("))
        #expect(data.contains("slideshow"))
        #expect(download.hasPrefix("success("))
        #expect(download.contains("slideshow"))
    }

    @Test func responseJSONHandsOverTheSerializersFailure() async throws {
        let server = try await testServer()
        let description = await DeprecatedJSON.responseJSONDescription(Session(), server.url("/html"))
        #expect(description.hasPrefix("failure("))
        #expect(description.contains("jsonSerializationFailed"))
    }

    @Test func serializerParsesAnObjectThatReadsAsADictionary() async throws {
        let server = try await testServer()
        let response = await DeprecatedJSON.data(Session(), server.url("/json"))
        #expect(response.error == nil)
        let object = try #require(response.value as? [String: Any])
        #expect(object["slideshow"] is [String: Any])
        #expect(response.response?.statusCode == 200)
    }

    @Test func anAllowedEmptyBodyIsNSNull() async throws {
        let server = try await testServer()
        let response = await DeprecatedJSON.data(Session(), server.url("/no-content"))
        #expect(response.response?.statusCode == 204)
        #expect(response.value is NSNull)
    }

    @Test func aDisallowedEmptyBodyFailsAsInputDataNilOrZeroLength() async throws {
        let server = try await testServer()
        let response = await DeprecatedJSON.data(Session(), server.url("/empty"))
        guard case .responseSerializationFailed(reason: .inputDataNilOrZeroLength)? = response.error else {
            Issue.record("expected inputDataNilOrZeroLength, got \(String(describing: response.error))")
            return
        }
    }

    @Test func aBodyThatIsNotJSONFailsAsJSONSerializationFailed() async throws {
        let server = try await testServer()
        let response = await DeprecatedJSON.data(Session(), server.url("/html"))
        guard case .responseSerializationFailed(reason: .jsonSerializationFailed)? = response.error else {
            Issue.record("expected jsonSerializationFailed, got \(String(describing: response.error))")
            return
        }
    }

    @Test func downloadSerializerReadsTheFile() async throws {
        let server = try await testServer()
        let response = await DeprecatedJSON.download(Session(), server.url("/json"))
        #expect(response.error == nil)
        #expect((response.value as? [String: Any])?["slideshow"] != nil)
        if let fileURL = response.fileURL { try? FileManager.default.removeItem(at: fileURL) }
    }

    /// `responseJSON` hands over the serializer's value retyped as `Any` (see
    /// Request+ResponseJSON.swift): sound only while `any Sendable` and `Any` are one type at run time.
    @Test func anySendableAndAnyAreOneTypeAtRunTime() {
        #expect(ObjectIdentifier((any Sendable).self) == ObjectIdentifier(Any.self))
        #expect(MemoryLayout<any Sendable>.size == MemoryLayout<Any>.size)
    }

    @Test func serializerHonoursItsOptionsAndPreprocessor() throws {
        let fragment = Data("\"just a string\"".utf8)
        #expect(try DeprecatedJSON.serialize(fragment, options: .allowFragments) as? String == "just a string")
        #expect(throws: AFError.self) { try DeprecatedJSON.serialize(fragment, options: []) }
        let guarded = Data(")]}',\n[1,2]".utf8)
        #expect(try DeprecatedJSON.serialize(guarded, preprocessor: GoogleXSSIPreprocessor()) as? [Int] == [1, 2])
        #expect(try DeprecatedJSON.serialize(Data(), method: .head) is NSNull)
        let failure = URLError(.timedOut)
        #expect(throws: URLError.self) { try DeprecatedJSON.serialize(Data("{}".utf8), error: failure) }
    }
}

/// The deprecated calls. They are made inside deprecated methods (Swift does not warn about
/// deprecated API used in a deprecated declaration), reached through a protocol whose
/// requirements are not deprecated: the test target builds without warnings.
private protocol DeprecatedJSONCalls: Sendable {
    func data(_ session: Session, _ url: String) async -> AFDataResponse<any Sendable>
    func download(_ session: Session, _ url: String) async -> AFDownloadResponse<any Sendable>
    func responseJSONDescription(_ session: Session, _ url: String) async -> String
    func downloadResponseJSONDescription(_ session: Session, _ url: String) async -> String
    func serialize(_ data: Data, method: HTTPMethod, options: JSONSerialization.ReadingOptions,
                   preprocessor: any DataPreprocessor, error: (any Error)?) throws -> any Sendable
}

extension DeprecatedJSONCalls {
    func serialize(_ data: Data,
                   method: HTTPMethod = .get,
                   options: JSONSerialization.ReadingOptions = .allowFragments,
                   preprocessor: any DataPreprocessor = PassthroughPreprocessor(),
                   error: (any Error)? = nil) throws -> any Sendable {
        try serialize(data, method: method, options: options, preprocessor: preprocessor, error: error)
    }
}

private struct DeprecatedJSONCaller: DeprecatedJSONCalls {
    /// `JSONResponseSerializer` through `response(responseSerializer:)`: its value is `any Sendable`.
    @available(*, deprecated, message: "Exercises deprecated API.")
    func data(_ session: Session, _ url: String) async -> AFDataResponse<any Sendable> {
        await withCheckedContinuation { continuation in
            session.request(url).response(responseSerializer: JSONResponseSerializer()) { continuation.resume(returning: $0) }
        }
    }

    @available(*, deprecated, message: "Exercises deprecated API.")
    func download(_ session: Session, _ url: String) async -> AFDownloadResponse<any Sendable> {
        await withCheckedContinuation { continuation in
            session.download(url).response(responseSerializer: JSONResponseSerializer()) { continuation.resume(returning: $0) }
        }
    }

    // `responseJSON`'s types named as older code names them (issue #39): as a closure's result, as
    // a closure's parameter, in a function's signature.
    @available(*, deprecated, message: "Exercises deprecated API.")
    func responseJSONDescription(_ session: Session, _ url: String) async -> String {
        let response: AFDataResponse<Any> = await withCheckedContinuation { continuation in
            session.request(url).responseJSON { continuation.resume(returning: $0) }
        }
        return Self.describe(response)
    }

    @available(*, deprecated, message: "Exercises deprecated API.")
    func downloadResponseJSONDescription(_ session: Session, _ url: String) async -> String {
        let request = session.download(url)
        let description = await withCheckedContinuation { continuation in
            request.responseJSON { (response: AFDownloadResponse<Any>) in
                continuation.resume(returning: Self.describe(response))
            }
        }
        if let fileURL = request.fileURL { try? FileManager.default.removeItem(at: fileURL) }
        return description
    }

    private static func describe(_ response: AFDataResponse<Any>) -> String {
        String(describing: response)
    }

    private static func describe(_ response: AFDownloadResponse<Any>) -> String {
        String(describing: response)
    }

    @available(*, deprecated, message: "Exercises deprecated API.")
    func serialize(_ data: Data, method: HTTPMethod, options: JSONSerialization.ReadingOptions,
                   preprocessor: any DataPreprocessor, error: (any Error)?) throws -> any Sendable {
        var request = URLRequest(url: URL(fileURLWithPath: "/"))
        request.httpMethod = method.rawValue
        let response = HTTPURLResponse(url: URL(fileURLWithPath: "/"), statusCode: 200, httpVersion: nil, headerFields: nil)
        return try JSONResponseSerializer(dataPreprocessor: preprocessor, options: options)
            .serialize(request: request, response: response, data: data, error: error)
    }
}

private let DeprecatedJSON: any DeprecatedJSONCalls = DeprecatedJSONCaller()
