import Foundation
import Testing
@testable import Lupine

@Suite struct JSONEncodingTests {
    private static func postRequest(headers: HTTPHeaders? = nil) throws -> URLRequest {
        try URLRequest(url: "https://example.com/items", method: .post, headers: headers)
    }

    private static func jsonEncodingError(_ body: () throws -> URLRequest) -> (any Error)? {
        let error = #expect(throws: AFError.self) { _ = try body() }
        guard case let .parameterEncodingFailed(reason: .jsonEncodingFailed(error: underlying))? = error else {
            Issue.record("expected .jsonEncodingFailed, got \(String(describing: error))")
            return nil
        }
        return underlying
    }

    @Test func jsonEncodingWritesParametersAsABodyWithContentType() throws {
        let parameters: Parameters = ["name": "lupine", "count": 2, "flag": true, "list": [1, "a"] as [any Sendable],
                                      "nested": ["k": NSNull()]]
        let encoded = try JSONEncoding.default.encode(try Self.postRequest(), with: parameters)

        let body = try #require(encoded.httpBody)
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object["name"] as? String == "lupine")
        #expect(object["count"] as? Int == 2)
        #expect(object["flag"] as? Bool == true)
        #expect((object["list"] as? [Any])?.count == 2)
        #expect((object["nested"] as? [String: Any])?["k"] is NSNull)
        #expect(encoded.headers["Content-Type"] == "application/json")
        #expect(!String(decoding: body, as: UTF8.self).contains("\n"))
    }

    @Test func nilParametersLeaveTheRequestUnchanged() throws {
        let request = try Self.postRequest()

        #expect(try JSONEncoding.default.encode(request, with: nil) == request)
        #expect(try JSONEncoding.default.encode(request, withJSONObject: nil) == request)
        #expect(try JSONEncoding.default.encode(request) == request)
    }

    @Test func existingContentTypeIsKept() throws {
        let request = try Self.postRequest(headers: [.contentType("application/vnd.api+json")])
        let encoded = try JSONEncoding.default.encode(request, with: ["a": 1])

        #expect(encoded.headers["Content-Type"] == "application/vnd.api+json")
    }

    @Test func jsonObjectEncodingAcceptsArrays() throws {
        let encoded = try JSONEncoding.default.encode(try Self.postRequest(), withJSONObject: [1, 2, 3])

        #expect(encoded.httpBody == Data("[1,2,3]".utf8))
        #expect(encoded.headers["Content-Type"] == "application/json")
    }

    @Test func prettyPrintedEncodingIndentsOutput() throws {
        let encoded = try JSONEncoding.prettyPrinted.encode(try Self.postRequest(), with: ["a": 1])
        let body = String(decoding: try #require(encoded.httpBody), as: UTF8.self)

        #expect(body.contains("\n"))
        #expect(JSONEncoding.prettyPrinted.options == .prettyPrinted)
        #expect(JSONEncoding.default.options == [])
        #expect(JSONEncoding(options: .sortedKeys).options == .sortedKeys)
    }

    @Test func invalidJSONObjectsThrowInvalidJSONObject() throws {
        let request = try Self.postRequest()
        let invalidValues: [Parameters] = [["date": Date()], ["nan": Double.nan], ["data": Data([1])]]

        for parameters in invalidValues {
            let underlying = Self.jsonEncodingError { try JSONEncoding.default.encode(request, with: parameters) }
            #expect(underlying as? JSONEncoding.Error == .invalidJSONObject)
        }
        let topLevelString = Self.jsonEncodingError { try JSONEncoding.default.encode(request, withJSONObject: "text") }
        #expect(topLevelString as? JSONEncoding.Error == .invalidJSONObject)
    }

    @Test func invalidJSONObjectErrorExplainsItself() {
        let description = JSONEncoding.Error.invalidJSONObject.localizedDescription

        #expect(description.contains("cannot be written as JSON"))
        #expect(Set([JSONEncoding.Error.invalidJSONObject, .invalidJSONObject]).count == 1)
    }

    @Test func requestConvertibleErrorsPropagate() {
        let error = #expect(throws: AFError.self) { try JSONEncoding.default.encode(FailingRouter(), with: ["a": 1]) }
        guard case .invalidURL? = error else {
            Issue.record("expected .invalidURL, got \(String(describing: error))")
            return
        }
    }
}

/// A router whose request cannot be built.
private struct FailingRouter: URLRequestConvertible {
    func asURLRequest() throws -> URLRequest {
        throw AFError.invalidURL(url: "not a url")
    }
}
