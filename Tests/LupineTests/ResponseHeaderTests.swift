import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Header fields in both directions: repeated response fields joined as URLSession joins them,
/// request fields checked before sending, and the Session configuration's fields merged in.
@Suite struct ResponseHeaderTests {
    // MARK: Response fields

    @Test func repeatedResponseHeaderFieldsAreJoinedWithCommaSpace() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/response-headers?X-A=1&X-A=2")).serializingData().response

        #expect(response.error == nil)
        #expect(response.response?.value(forHTTPHeaderField: "X-A") == "1, 2")
        #expect(response.response?.value(forHTTPHeaderField: "x-a") == "1, 2")
        #expect(response.response?.headers["X-A"] == "1, 2")
    }

    @Test func repeatedSetCookieFieldsYieldEveryCookie() async throws {
        let server = try await testServer()
        let url = server.url("/response-headers?Set-Cookie=a%3D1&Set-Cookie=b%3D2%3B%20Path%3D%2F")
        // An ephemeral Session: these cookies must not reach the shared storage other tests send from.
        let session = Session(configuration: URLSessionConfiguration.af.ephemeral)
        let response = await session.request(url).serializingData().response
        let httpResponse = try #require(response.response)
        let responseURL = try #require(httpResponse.url)

        var fields: [String: String] = [:]
        for case let (name as String, value as String) in httpResponse.allHeaderFields { fields[name] = value }
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: fields, for: responseURL)

        #expect(cookies.map(\.name) == ["a", "b"])
        #expect(cookies.map(\.value) == ["1", "2"])
        #expect(cookies.allSatisfy { $0.domain == "127.0.0.1" })
    }

    @Test func setCookieWithExpiresDateIsNotSplitAtItsComma() async throws {
        let server = try await testServer()
        let expiring = "a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT"
        let encoded = expiring.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expiring
        let session = Session(configuration: URLSessionConfiguration.af.ephemeral)
        let response = await session.request(server.url("/response-headers?Set-Cookie=\(encoded)&Set-Cookie=b%3D2"))
            .serializingData().response
        let httpResponse = try #require(response.response)
        let responseURL = try #require(httpResponse.url)

        let fields = ["Set-Cookie": httpResponse.value(forHTTPHeaderField: "Set-Cookie") ?? ""]
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: fields, for: responseURL)

        #expect(cookies.map(\.name) == ["a", "b"])
        #expect(cookies.first?.expiresDate != nil)
    }

    // MARK: Request fields checked before sending

    @Test func headerValueWithCRLFPassedAsHeadersIsRejectedBeforeSending() async throws {
        let server = try await testServer()
        let path = "/anything/crlf-headers-\(UUID().uuidString)"
        let response = await AF.request(server.url(path), headers: ["X-Bad": "a\r\nInjected: b"])
            .serializingData().response

        expectInvalidHeaderError(response.error, named: "X-Bad")
        #expect(response.response == nil)
        #expect(server.hits(for: path) == 0)
    }

    @Test func headerValueWithCRLFSetByRequestModifierIsRejectedBeforeSending() async throws {
        let server = try await testServer()
        let path = "/anything/crlf-modifier-\(UUID().uuidString)"
        let request = AF.request(server.url(path), requestModifier: { $0.allHTTPHeaderFields = ["X-Bad": "a\r\nb"] })
        let response = await request.serializingData().response

        expectInvalidHeaderError(response.error, named: "X-Bad")
        #expect(request.performedRequests.isEmpty)
        #expect(server.hits(for: path) == 0)
    }

    @Test func headerValueWithLoneLineFeedInURLRequestConvertibleIsRejected() async throws {
        struct Router: URLRequestConvertible {
            let url: URL
            func asURLRequest() throws -> URLRequest {
                var request = URLRequest(url: url)
                request.allHTTPHeaderFields = ["X-Bad": "a\nb"]
                return request
            }
        }
        let server = try await testServer()
        let path = "/anything/lf-router-\(UUID().uuidString)"
        let url = try #require(URL(string: server.url(path)))
        let response = await AF.request(Router(url: url)).serializingData().response

        expectInvalidHeaderError(response.error, named: "X-Bad")
        #expect(server.hits(for: path) == 0)
    }

    @Test func headerNameThatIsNotATokenIsRejectedBeforeSending() async throws {
        let server = try await testServer()
        let path = "/anything/bad-name-\(UUID().uuidString)"
        let response = await AF.request(server.url(path), requestModifier: { $0.allHTTPHeaderFields = ["X Bad:": "v"] })
            .serializingData().response

        expectInvalidHeaderError(response.error, named: "X Bad:")
        #expect(server.hits(for: path) == 0)
    }

    private func expectInvalidHeaderError(_ error: AFError?, named name: String,
                                          sourceLocation: SourceLocation = #_sourceLocation) {
        guard case let .createURLRequestFailed(underlying)? = error,
              let headerError = underlying as? InvalidHTTPHeaderError
        else {
            Issue.record("expected createURLRequestFailed(InvalidHTTPHeaderError), got \(String(describing: error))",
                         sourceLocation: sourceLocation)
            return
        }
        #expect(headerError.name == name, sourceLocation: sourceLocation)
    }

    // MARK: Session configuration fields

    @Test func sessionConfigurationHeadersAreSentAndRequestHeaderWins() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.headers.add(name: "X-Session-Only", value: "session")
        configuration.headers.add(name: "X-Both", value: "session")
        let session = Session(configuration: configuration)

        let response = await session.request(server.url("/get"), headers: ["x-both": "request"])
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.value?.header("X-Session-Only") == "session")
        #expect(response.value?.header("X-Both") == "request")
        #expect(response.value?.header("User-Agent")?.hasSuffix("Lupine/\(AFInfo.version)") == true)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func sessionConfigurationHeadersAreSentOnEveryRedirectHop() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.headers.add(name: "X-Session-Only", value: "session")
        let session = Session(configuration: configuration)

        let response = await session.request(server.url("/redirect/2"))
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.value?.header("X-Session-Only") == "session")
        #expect(await session.performsNormalRequest(on: server))
    }
}
