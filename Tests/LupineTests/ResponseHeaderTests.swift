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
