import Foundation
import Testing
@testable import Lupine

@Suite struct ParameterEncoderTests {
    private struct Query: Encodable, Sendable {
        let b = "x y"
        let a = 1
    }

    private struct NotANumber: Encodable, Sendable {
        let value = Double.nan
    }

    private static func request(_ url: String = "https://example.com/path",
                                method: HTTPMethod,
                                headers: HTTPHeaders? = nil) throws -> URLRequest {
        try URLRequest(url: url, method: method, headers: headers)
    }

    private static func encoderError(_ body: () throws -> URLRequest) -> AFError.ParameterEncoderFailureReason? {
        let error = #expect(throws: AFError.self) { _ = try body() }
        guard case let .parameterEncoderFailed(reason)? = error else {
            Issue.record("expected .parameterEncoderFailed, got \(String(describing: error))")
            return nil
        }
        return reason
    }

    // MARK: JSONParameterEncoder

    @Test func jsonParameterEncoderWritesTheBodyAndContentType() throws {
        let encoded = try JSONParameterEncoder.default.encode(["k": "v"], into: try Self.request(method: .post))

        #expect(encoded.httpBody == Data(#"{"k":"v"}"#.utf8))
        #expect(encoded.headers["Content-Type"] == "application/json")
    }

    @Test func jsonParameterEncoderLeavesTheRequestAloneForNil() throws {
        let request = try Self.request(method: .post)

        #expect(try JSONParameterEncoder.default.encode(Optional<[String: String]>.none, into: request) == request)
    }

    @Test func jsonParameterEncoderKeepsAnExistingContentType() throws {
        let request = try Self.request(method: .post, headers: [.contentType("application/merge-patch+json")])
        let encoded = try JSONParameterEncoder.default.encode(["k": "v"], into: request)

        #expect(encoded.headers["Content-Type"] == "application/merge-patch+json")
    }

    @Test func jsonParameterEncoderPresetsConfigureTheJSONEncoder() throws {
        let request = try Self.request(method: .post)
        let sorted = try JSONParameterEncoder.sortedKeys.encode(["b": 1, "a": 2, "c": 3], into: request)
        let pretty = try JSONParameterEncoder.prettyPrinted.encode(["a": 1], into: request)

        #expect(sorted.httpBody == Data(#"{"a":2,"b":1,"c":3}"#.utf8))
        #expect(String(decoding: try #require(pretty.httpBody), as: UTF8.self).contains("\n"))
        #expect(JSONParameterEncoder.prettyPrinted.encoder.outputFormatting == .prettyPrinted)
        #expect(JSONParameterEncoder.sortedKeys.encoder.outputFormatting == .sortedKeys)
        #expect(JSONParameterEncoder.default.encoder.outputFormatting == [])
    }

    @Test func jsonFactoriesBuildJSONParameterEncoders() throws {
        let custom = JSONEncoder()
        custom.keyEncodingStrategy = .convertToSnakeCase
        let viaProperty: JSONParameterEncoder = .json
        let viaFactory: JSONParameterEncoder = .json(encoder: custom)

        #expect(viaFactory.encoder === custom)
        #expect(viaProperty.encoder !== custom)
        let encoded = try viaFactory.encode(["camelCase": 1], into: try Self.request(method: .post))
        #expect(encoded.httpBody == Data(#"{"camelCase":1}"#.utf8))
    }

    @Test func jsonEncoderFailureBecomesJSONEncodingFailed() throws {
        let request = try Self.request(method: .post)

        let error = #expect(throws: AFError.self) { try JSONParameterEncoder.default.encode(NotANumber(), into: request) }
        guard case let .parameterEncodingFailed(reason: .jsonEncodingFailed(error: underlying))? = error else {
            Issue.record("expected .jsonEncodingFailed, got \(String(describing: error))")
            return
        }
        #expect(underlying is EncodingError)
    }

    // MARK: URLEncodedFormParameterEncoder

    @Test func formEncoderAppendsTheQueryForGET() throws {
        let request = try Self.request("https://example.com/path?x=1", method: .get)
        let encoded = try URLEncodedFormParameterEncoder.default.encode(Query(), into: request)

        #expect(encoded.url?.absoluteString == "https://example.com/path?x=1&a=1&b=x%20y")
        #expect(encoded.httpBody == nil)
        #expect(encoded.headers["Content-Type"] == nil)
    }

    @Test(arguments: [HTTPMethod.get, .head, .delete])
    func formEncoderMethodDependentDestinationUsesTheQueryFor(method: HTTPMethod) throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(Query(), into: try Self.request(method: method))

        #expect(encoded.url?.query == "a=1&b=x%20y")
    }

    @Test func formEncoderWritesTheBodyForPOST() throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(Query(), into: try Self.request(method: .post))

        #expect(encoded.url?.absoluteString == "https://example.com/path")
        #expect(encoded.httpBody == Data("a=1&b=x%20y".utf8))
        #expect(encoded.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func formEncoderKeepsAnExistingContentType() throws {
        let request = try Self.request(method: .put, headers: [.contentType("text/plain")])
        let encoded = try URLEncodedFormParameterEncoder.default.encode(Query(), into: request)

        #expect(encoded.headers["Content-Type"] == "text/plain")
    }

    @Test func formEncoderExplicitDestinationsOverrideTheMethod() throws {
        let queryEncoder = URLEncodedFormParameterEncoder(destination: .queryString)
        let bodyEncoder = URLEncodedFormParameterEncoder(destination: .httpBody)

        let post = try queryEncoder.encode(Query(), into: try Self.request(method: .post))
        let get = try bodyEncoder.encode(Query(), into: try Self.request(method: .get))

        #expect(post.url?.query == "a=1&b=x%20y")
        #expect(post.httpBody == nil)
        #expect(get.url?.query == nil)
        #expect(get.httpBody == Data("a=1&b=x%20y".utf8))
    }

    @Test func formEncoderRemovesTheQuestionMarkWhenTheQueryIsEmpty() throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode([String: String](),
                                                                       into: try Self.request(method: .get))

        #expect(encoded.url?.absoluteString == "https://example.com/path")
    }

    @Test func formEncoderJoinsAnEmptyNewQueryWithAnAmpersandAsAlamofireDoes() throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode([String: String](),
                                                                       into: try Self.request("https://e.com/?x=1", method: .get))

        #expect(encoded.url?.absoluteString == "https://e.com/?x=1&")
    }

    @Test func formEncoderLeavesTheRequestAloneForNil() throws {
        let request = try Self.request(method: .get)

        #expect(try URLEncodedFormParameterEncoder.default.encode(Optional<Query>.none, into: request) == request)
    }

    @Test func formEncoderWithoutURLThrowsMissingURL() throws {
        var request = try Self.request(method: .get)
        request.url = nil

        let reason = Self.encoderError { try URLEncodedFormParameterEncoder.default.encode(Query(), into: request) }
        guard case .missingRequiredComponent(.url)? = reason else {
            Issue.record("expected .missingRequiredComponent(.url), got \(String(describing: reason))")
            return
        }
    }

    @Test func requestsWithoutAMethodReadAsGETOnThisPlatform() throws {
        // The `.missingRequiredComponent(.httpMethod(rawValue: "nil"))` failure needs a request whose
        // `httpMethod` is nil; Foundation reports "GET" for such requests, so it is not reachable here.
        var request = try Self.request(method: .post)
        request.httpMethod = nil

        let encoded = try URLEncodedFormParameterEncoder.default.encode(Query(), into: request)
        #expect(encoded.url?.query == "a=1&b=x%20y")
    }

    @Test func formEncoderErrorsAreWrappedAsEncoderFailed() throws {
        let request = try Self.request(method: .post)

        let reason = Self.encoderError { try URLEncodedFormParameterEncoder.default.encode([1, 2], into: request) }
        guard case let .encoderFailed(error: underlying)? = reason else {
            Issue.record("expected .encoderFailed, got \(String(describing: reason))")
            return
        }
        guard case .invalidRootObject? = underlying as? URLEncodedFormEncoder.Error else {
            Issue.record("expected .invalidRootObject, got \(underlying)")
            return
        }
    }

    @Test func formEncoderQueryErrorsAreWrappedAsEncoderFailed() throws {
        let request = try Self.request(method: .get)

        let reason = Self.encoderError { try URLEncodedFormParameterEncoder.default.encode("text", into: request) }
        guard case .encoderFailed? = reason else {
            Issue.record("expected .encoderFailed, got \(String(describing: reason))")
            return
        }
    }

    @Test(arguments: ["[", "<", "|", "%", "%zz"])
    func allowedCharactersAQueryCannotHoldThrowInsteadOfStoppingTheProcess(character: String) throws {
        var allowed = CharacterSet.afURLQueryAllowed
        allowed.insert(charactersIn: character)
        let encoder = URLEncodedFormParameterEncoder(encoder: URLEncodedFormEncoder(allowedCharacters: allowed))
        let request = try Self.request(method: .get)

        let reason = Self.encoderError { try encoder.encode(["k": "a\(character)b"], into: request) }
        guard case let .encoderFailed(error: underlying)? = reason else {
            Issue.record("expected .encoderFailed, got \(String(describing: reason))")
            return
        }
        #expect((underlying as? URLError)?.code == .badURL)
        // In the body the same form is fine: no URL is built.
        let body = try encoder.encode(["k": "a\(character)b"], into: try Self.request(method: .post)).httpBody
        #expect(body.map { String(decoding: $0, as: UTF8.self) }?.hasPrefix("k=a") == true)
    }

    @Test func queryCharactersAndEscapesStillPassWithWidenedAllowedCharacters() throws {
        var allowed = CharacterSet.afURLQueryAllowed
        allowed.insert(charactersIn: ":@!$'()*,;")
        let encoder = URLEncodedFormParameterEncoder(encoder: URLEncodedFormEncoder(allowedCharacters: allowed))

        let encoded = try encoder.encode(["k": "a:b@c!d$(e)*f,g;h é"], into: try Self.request("https://example.com/p?x=%41", method: .get))
        #expect(encoded.url?.query == "x=%41&k=a:b@c!d$(e)*f,g;h%20%C3%A9")
    }

    @Test func urlEncodedFormFactoriesBuildFormEncoders() throws {
        let formEncoder = URLEncodedFormEncoder(boolEncoding: .literal)
        let viaProperty: URLEncodedFormParameterEncoder = .urlEncodedForm
        let viaFactory: URLEncodedFormParameterEncoder = .urlEncodedForm(encoder: formEncoder, destination: .httpBody)

        #expect(viaProperty.destination == .methodDependent)
        #expect(URLEncodedFormParameterEncoder.default.destination == .methodDependent)
        #expect(viaFactory.encoder === formEncoder)
        #expect(viaFactory.destination == .httpBody)
        let encoded = try viaFactory.encode(["flag": true], into: try Self.request(method: .get))
        #expect(encoded.httpBody == Data("flag=true".utf8))
    }

    @Test func encodersWorkThroughTheProtocol() throws {
        let encoders: [any ParameterEncoder] = [JSONParameterEncoder.default, URLEncodedFormParameterEncoder.default]
        let request = try Self.request(method: .post)

        let bodies = try encoders.map { try $0.encode(["k": "v"], into: request).httpBody }
        #expect(bodies == [Data(#"{"k":"v"}"#.utf8), Data("k=v".utf8)])
    }
}
