import Foundation
import Testing
@testable import Lupine

@Suite struct URLRequestHelpersTests {
    private static let url = URL(string: "https://example.com/path")

    @Test func initSetsURLMethodAndHeaders() throws {
        let request = try URLRequest(url: "https://example.com/a?b=c", method: .patch, headers: [.accept("json")])

        #expect(request.url?.absoluteString == "https://example.com/a?b=c")
        #expect(request.httpMethod == "PATCH")
        #expect(request.allHTTPHeaderFields == ["Accept": "json"])
    }

    @Test func initWithoutHeadersLeavesHeaderFieldsEmpty() throws {
        let request = try URLRequest(url: try #require(Self.url), method: .get)

        #expect(request.headers.isEmpty)
        #expect(request.method == .get)
    }

    @Test func initWithInvalidURLThrowsInvalidURL() {
        let error = #expect(throws: AFError.self) {
            try URLRequest(url: "http://exa mple.com/%%", method: .get)
        }
        guard case let .invalidURL(url)? = error else {
            Issue.record("expected .invalidURL, got \(String(describing: error))")
            return
        }
        #expect(url as? String == "http://exa mple.com/%%")
    }

    @Test func methodIsATypedViewOfHTTPMethod() throws {
        var request = URLRequest(url: try #require(Self.url))
        request.method = .init(rawValue: "PROPFIND")
        #expect(request.httpMethod == "PROPFIND")

        request.httpMethod = "PUT"
        #expect(request.method == .put)

        request.method = nil
        // Foundation reports GET for a request without a method, so `method` is never nil in practice.
        #expect(request.method == .get)
    }

    @Test func validateRejectsAGETWithABody() throws {
        var request = try URLRequest(url: try #require(Self.url), method: .get)
        request.httpBody = Data("body".utf8)

        let error = #expect(throws: AFError.self) { try request.validate() }
        guard case let .urlRequestValidationFailed(reason: .bodyDataInGETRequest(body))? = error else {
            Issue.record("expected .bodyDataInGETRequest, got \(String(describing: error))")
            return
        }
        #expect(body == Data("body".utf8))
    }

    @Test func validateAcceptsBodiesOnOtherMethodsAndBodilessGETs() throws {
        var post = try URLRequest(url: try #require(Self.url), method: .post)
        post.httpBody = Data("body".utf8)
        let get = try URLRequest(url: try #require(Self.url), method: .get)

        #expect(throws: Never.self) { try post.validate() }
        #expect(throws: Never.self) { try get.validate() }
    }

    @Test func headerValidationAcceptsOrdinaryFields() throws {
        var request = try URLRequest(url: try #require(Self.url), method: .get)
        request.headers = [.accept("*/*"), .authorization(bearerToken: "a.b-c"), .userAgent("x/1 (y; z)"),
                           HTTPHeader(name: "X-Token_!#$%&'*+.^`|~9", value: "tab\tand ünïcode")]

        #expect(throws: Never.self) { try request.lupineValidateHeaderFields() }
        #expect(throws: Never.self) { try URLRequest(url: try #require(Self.url)).lupineValidateHeaderFields() }
    }

    @Test(arguments: ["evil\r\nX-Injected: 1", "line\nfeed", "carriage\rreturn", "nul\u{0}byte"])
    func headerValidationRejectsValuesWithCRLFOrNUL(value: String) throws {
        var request = try URLRequest(url: try #require(Self.url), method: .get)
        // setValue(_:forHTTPHeaderField:) silently drops such values on Linux; the dictionary keeps them.
        request.allHTTPHeaderFields = ["Accept": "ok", "X-Custom": value]

        let headerError = try #require(invalidHeaderError { try request.lupineValidateHeaderFields() })
        #expect(headerError.name == "X-Custom")
        #expect(headerError.problem == .invalidValue)
        #expect(headerError.description.contains("X-Custom"))
        #expect(!headerError.description.contains(value))
    }

    @Test(arguments: ["", "Bad Name", "Colon:", "Line\r\nBreak", "Ünicode", "Quote\"", "(paren)"])
    func headerValidationRejectsNamesThatAreNotTokens(name: String) throws {
        var request = try URLRequest(url: try #require(Self.url), method: .get)
        request.allHTTPHeaderFields = [name: "value"]

        let headerError = try #require(invalidHeaderError { try request.lupineValidateHeaderFields() })
        #expect(headerError.name == name)
        #expect(headerError.problem == .invalidName)
        #expect(headerError.description.contains("not a valid token"))
    }

    /// Runs `body` and returns the ``InvalidHTTPHeaderError`` wrapped in the `.createURLRequestFailed` it throws.
    private func invalidHeaderError(_ body: () throws -> Void) -> InvalidHTTPHeaderError? {
        let error = #expect(throws: AFError.self) { try body() }
        guard case let .createURLRequestFailed(error: underlying)? = error else {
            Issue.record("expected .createURLRequestFailed, got \(String(describing: error))")
            return nil
        }
        return underlying as? InvalidHTTPHeaderError
    }
}
