import Foundation
import Testing
@testable import Lupine

@Suite struct URLEncodingTests {
    private static func request(_ url: String, method: HTTPMethod, headers: HTTPHeaders? = nil) throws -> URLRequest {
        try URLRequest(url: url, method: method, headers: headers)
    }

    @Test func urlEncodingSortsKeysAndEscapesNestedValues() throws {
        let request = try Self.request("https://example.com/path?x=1", method: .get)
        let parameters: Parameters = ["b": [1, 2], "a": true, "c": ["d": "e f"], "z": "&=?/:"]

        let encoded = try URLEncoding.default.encode(request, with: parameters)

        #expect(encoded.url?.absoluteString
            == "https://example.com/path?x=1&a=1&b%5B%5D=1&b%5B%5D=2&c%5Bd%5D=e%20f&z=%26%3D?/%3A")
        #expect(encoded.httpBody == nil)
    }

    /// `request(...)` passes `URLEncoding.default` as an `any ParameterEncoding` on every call:
    /// a value of three words or less is stored in the existential itself, a larger one is boxed
    /// on the heap (an allocation per request).
    @Test func urlEncodingFitsInAnExistentialWithoutABox() {
        #expect(MemoryLayout<URLEncoding>.size <= 3 * MemoryLayout<Int>.size)
    }

    @Test func nilParametersLeaveTheRequestUnchanged() throws {
        let request = try Self.request("https://example.com/?q=1", method: .post)

        #expect(try URLEncoding.default.encode(request, with: nil) == request)
        #expect(try URLEncoding.queryString.encode(request, with: nil) == request)
    }

    @Test func emptyParametersLeaveTheURLUntouchedOrGiveAnEmptyBody() throws {
        let get = try Self.request("https://example.com/path?x=1", method: .get)
        let post = try Self.request("https://example.com/path", method: .post)

        #expect(try URLEncoding.default.encode(get, with: [:]).url == get.url)
        let encodedPost = try URLEncoding.default.encode(post, with: [:])
        #expect(encodedPost.httpBody == Data())
        #expect(encodedPost.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test(arguments: [HTTPMethod.get, .head, .delete])
    func methodDependentDestinationPutsGETHEADDELETEInTheQuery(method: HTTPMethod) throws {
        let encoded = try URLEncoding.default.encode(try Self.request("https://example.com", method: method),
                                                     with: ["k": "v"])

        #expect(encoded.url?.absoluteString == "https://example.com?k=v")
        #expect(encoded.httpBody == nil)
        #expect(encoded.headers["Content-Type"] == nil)
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch, .options, .query, HTTPMethod(rawValue: "CUSTOM")])
    func methodDependentDestinationPutsOtherMethodsInTheBody(method: HTTPMethod) throws {
        let encoded = try URLEncoding.default.encode(try Self.request("https://example.com", method: method),
                                                     with: ["k": "v w", "a": 1])

        #expect(encoded.url?.absoluteString == "https://example.com")
        #expect(encoded.httpBody == Data("a=1&k=v%20w".utf8))
        #expect(encoded.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func queryStringDestinationAlwaysWritesTheQuery() throws {
        let encoded = try URLEncoding.queryString.encode(try Self.request("https://example.com/p", method: .post),
                                                         with: ["k": "v"])

        #expect(encoded.url?.absoluteString == "https://example.com/p?k=v")
        #expect(encoded.httpBody == nil)
        #expect(URLEncoding.queryString.destination == .queryString)
    }

    @Test func httpBodyDestinationAlwaysWritesTheBody() throws {
        let encoded = try URLEncoding.httpBody.encode(try Self.request("https://example.com/p", method: .get),
                                                      with: ["k": "v"])

        #expect(encoded.url?.absoluteString == "https://example.com/p")
        #expect(encoded.httpBody == Data("k=v".utf8))
        #expect(URLEncoding.httpBody.destination == .httpBody)
    }

    @Test func bodyDestinationKeepsAnExistingContentType() throws {
        let request = try Self.request("https://example.com", method: .post, headers: [.contentType("text/plain")])
        let encoded = try URLEncoding.default.encode(request, with: ["k": "v"])

        #expect(encoded.headers["Content-Type"] == "text/plain")
    }

    @Test func queryDestinationWithoutURLThrowsMissingURL() throws {
        var request = try Self.request("https://example.com", method: .get)
        request.url = nil

        let error = #expect(throws: AFError.self) { try URLEncoding.default.encode(request, with: ["k": "v"]) }
        guard case .parameterEncodingFailed(reason: .missingURL)? = error else {
            Issue.record("expected .missingURL, got \(String(describing: error))")
            return
        }
    }

    @Test func convertibleErrorsPropagateUnchanged() {
        let error = #expect(throws: AFError.self) { try URLEncoding.default.encode(FailingRouter(), with: ["k": "v"]) }
        guard case .invalidURL? = error else {
            Issue.record("expected .invalidURL, got \(String(describing: error))")
            return
        }
    }

    @Test func defaultsAreMethodDependentBracketsAndNumeric() {
        let encoding = URLEncoding.default

        #expect(encoding.destination == .methodDependent)
        #expect(encoding.boolEncoding == .numeric)
        #expect(encoding.queryComponents(fromKey: "a", value: [1]).map { "\($0)=\($1)" } == ["a%5B%5D=1"])
    }

    @Test func arrayEncodingsFormatElementKeys() {
        let value: [any Sendable] = ["x", "y"]
        func pairs(_ encoding: URLEncoding.ArrayEncoding) -> [String] {
            URLEncoding(arrayEncoding: encoding).queryComponents(fromKey: "list", value: value).map { "\($0)=\($1)" }
        }

        #expect(pairs(.brackets) == ["list%5B%5D=x", "list%5B%5D=y"])
        #expect(pairs(.noBrackets) == ["list=x", "list=y"])
        #expect(pairs(.indexInBrackets) == ["list%5B0%5D=x", "list%5B1%5D=y"])
        #expect(pairs(.custom { key, index in "\(key).\(index + 1)" }) == ["list.1=x", "list.2=y"])
    }

    @Test func boolEncodingsWriteNumbersOrLiterals() {
        let numeric = URLEncoding(boolEncoding: .numeric)
        let literal = URLEncoding(boolEncoding: .literal)

        #expect(numeric.queryComponents(fromKey: "a", value: true).first?.1 == "1")
        #expect(numeric.queryComponents(fromKey: "a", value: false).first?.1 == "0")
        #expect(literal.queryComponents(fromKey: "a", value: true).first?.1 == "true")
        #expect(literal.queryComponents(fromKey: "a", value: false).first?.1 == "false")
    }

    @Test func boolTypedNSNumbersAreBoolsButIntegerNSNumbersAreNot() {
        let literal = URLEncoding(boolEncoding: .literal)

        #expect(literal.queryComponents(fromKey: "a", value: NSNumber(value: true)).first?.1 == "true")
        #expect(literal.queryComponents(fromKey: "a", value: NSNumber(value: false)).first?.1 == "false")
        #expect(literal.queryComponents(fromKey: "a", value: NSNumber(value: 1)).first?.1 == "1")
        #expect(literal.queryComponents(fromKey: "a", value: NSNumber(value: 0)).first?.1 == "0")
        #expect(literal.queryComponents(fromKey: "a", value: NSNumber(value: Int8(1))).first?.1 == "1")
        #expect(literal.queryComponents(fromKey: "a", value: 1).first?.1 == "1")
        #expect(literal.queryComponents(fromKey: "a", value: 2.5).first?.1 == "2.5")
    }

    @Test func optionalNumbersAndBoolsAreUnwrappedThroughNSNumberBridging() {
        let literal = URLEncoding(boolEncoding: .literal)
        let number: Int? = 3
        let flag: Bool? = true
        let parameters: Parameters = ["n": number, "f": flag]

        #expect(literal.queryComponents(fromKey: "n", value: number as Any).first?.1 == "3")
        #expect(literal.queryComponents(fromKey: "f", value: flag as Any).first?.1 == "true")
        #expect(parameters.count == 2)
    }

    @Test func nestedDictionariesAndArraysComposeKeysWithSortedNestedKeys() {
        let inner: [String: any Sendable] = ["y": [true, "s"] as [any Sendable], "b": NSNull()]
        let value: [String: any Sendable] = ["z": 1, "a": inner]
        let pairs = URLEncoding.default.queryComponents(fromKey: "root", value: value).map { "\($0)=\($1)" }

        #expect(pairs == [
            "root%5Ba%5D%5Bb%5D=%3Cnull%3E",
            "root%5Ba%5D%5By%5D%5B%5D=1",
            "root%5Ba%5D%5By%5D%5B%5D=s",
            "root%5Bz%5D=1",
        ])
    }

    @Test func otherValuesAreWrittenWithStringInterpolation() {
        struct Point: CustomStringConvertible { var description: String { "(1, 2)" } }
        let pairs = URLEncoding.default.queryComponents(fromKey: "p", value: Point())

        #expect(pairs.map { "\($0)=\($1)" } == ["p=%281%2C%202%29"])
    }

    @Test func escapeKeepsQuestionMarkAndSlashAndEscapesDelimiters() {
        let encoding = URLEncoding.default

        #expect(encoding.escape("a?b/c") == "a?b/c")
        #expect(encoding.escape(":#[]@!$&'()*+,;=") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D")
        #expect(encoding.escape("-._~ é") == "-._~%20%C3%A9")
        #expect(encoding.escape("👍") == "%F0%9F%91%8D")
    }

    @Test func afURLQueryAllowedIsURLQueryAllowedMinusDelimiters() {
        let allowed = CharacterSet.afURLQueryAllowed

        for character in ":#[]@!$&'()*+,;=".unicodeScalars {
            #expect(!allowed.contains(character))
        }
        for character in "?/-._~azAZ09".unicodeScalars {
            #expect(allowed.contains(character))
        }
    }

    @Test func queryIsAppendedToAnExistingPercentEncodedQuery() throws {
        let request = try Self.request("https://example.com/?q=a%20b&r", method: .get)
        let encoded = try URLEncoding.default.encode(request, with: ["s": "t"])

        #expect(encoded.url?.absoluteString == "https://example.com/?q=a%20b&r&s=t")
    }
}

/// A router whose request cannot be built.
private struct FailingRouter: URLRequestConvertible {
    func asURLRequest() throws -> URLRequest {
        throw AFError.invalidURL(url: "not a url")
    }
}
