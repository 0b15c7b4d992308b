import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// Redirects are followed by Lupine itself, with URLSession's rules: at most 16 hops, 301/302 turn
/// POST into GET, 303 turns any method but HEAD into GET, 307/308 keep method and body, and
/// credentials never travel to another origin.
@Suite struct RedirectTests {
    private static func redirectTo(_ server: LupineTestServer, _ target: String, status: Int) -> String {
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        return server.url("/redirect-to?url=\(encoded)&status_code=\(status)")
    }

    // MARK: Following

    @Test func redirectChainEndsAtFinalURLAfterEveryHop() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/redirect/3"))
        let response = await request.serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.response?.statusCode == 200)
        #expect(response.response?.url?.absoluteString == server.url("/get"))
        // One entry per attempt, as Alamofire's (the task's `currentRequest`): the last hop sent.
        #expect(request.performedRequests.map { $0.url?.absoluteString } == [server.url("/get")])
        #expect(request.timeline.redirectCount == 3)
        #expect(response.value?.url.hasSuffix("/get") == true)
    }

    @Test func absoluteRedirectChainIsFollowed() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/absolute-redirect/2"))
        let response = await request.serializingData().response

        #expect(response.error == nil)
        #expect(response.response?.url?.absoluteString == server.url("/get"))
        #expect(request.timeline.redirectCount == 2)
    }

    @Test func moreThanSixteenRedirectsFailWithTooManyRedirects() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/redirect/20"))
        let response = await request.serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .httpTooManyRedirects)
        #expect(request.timeline.redirectCount == RedirectRules.maximumRedirects)
    }

    @Test func sixteenRedirectsAreFollowed() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/redirect/16")).serializingData().response

        #expect(response.error == nil)
        #expect(response.response?.url?.path == "/get")
    }

    // MARK: Method and body

    @Test(arguments: [301, 302])
    func postRedirectedWith301Or302ArrivesAsGETWithoutBody(status: Int) async throws {
        let server = try await testServer()
        let response = await AF.request(Self.redirectTo(server, "/anything", status: status), method: .post,
                                        parameters: ["a": "1"])
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.value?.method == "GET")
        #expect(response.value?.data == "")
        #expect(response.value?.form.isEmpty == true)
        #expect(response.value?.header("Content-Type") == nil)
        #expect(response.value?.header("Content-Length") == nil)
    }

    @Test func putRedirectedWith303ArrivesAsGETWithoutBody() async throws {
        let server = try await testServer()
        let response = await AF.request(Self.redirectTo(server, "/anything", status: 303), method: .put,
                                        parameters: ["a": "1"])
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.value?.method == "GET")
        #expect(response.value?.data == "")
        #expect(response.value?.header("Content-Type") == nil)
    }

    @Test(arguments: [307, 308])
    func postRedirectedWith307Or308KeepsMethodAndBody(status: Int) async throws {
        let server = try await testServer()
        let response = await AF.request(Self.redirectTo(server, "/anything", status: status), method: .post,
                                        parameters: ["a": "1", "b": "2"])
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.value?.method == "POST")
        #expect(response.value?.form == ["a": .string("1"), "b": .string("2")])
        #expect(response.value?.header("Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test(arguments: [307, 308])
    func streamBodyRedirectedWith307Or308FailsWithBodyStreamExhausted(status: Int) async throws {
        let server = try await testServer()
        let path = "/anything/stream-\(status)-\(UUID().uuidString)"
        let response = await AF.request(Self.redirectTo(server, path, status: status), method: .post,
                                        requestModifier: { $0.httpBodyStream = InputStream(data: Data("hello".utf8)) })
            .serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .requestBodyStreamExhausted)
        #expect(server.hits(for: path) == 0)
    }

    @Test func streamBodyRedirectedWith302ArrivesAsGETWithoutBody() async throws {
        let server = try await testServer()
        let response = await AF.request(Self.redirectTo(server, "/anything", status: 302), method: .post,
                                        requestModifier: { $0.httpBodyStream = InputStream(data: Data("hello".utf8)) })
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.value?.method == "GET")
        #expect(response.value?.data == "")
    }

    // MARK: Credentials

    @Test func authorizationAndCookieAreKeptOnSameOriginRedirect() async throws {
        let server = try await testServer()
        let headers: HTTPHeaders = [.authorization(bearerToken: "secret"), HTTPHeader(name: "Cookie", value: "session=1")]
        let response = await AF.request(Self.redirectTo(server, "/anything", status: 302), headers: headers)
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.value?.header("Authorization") == "Bearer secret")
        #expect(response.value?.header("Cookie") == "session=1")
    }

    @Test(arguments: [302, 307])
    func authorizationAndCookieAreDroppedOnCrossOriginRedirect(status: Int) async throws {
        let server = try await testServer()
        let otherOrigin = try await LupineTestServer.start()
        let headers: HTTPHeaders = [.authorization(bearerToken: "secret"), HTTPHeader(name: "Cookie", value: "session=1"),
                                    HTTPHeader(name: "Proxy-Authorization", value: "Basic cHJveHk6c2VjcmV0"),
                                    HTTPHeader(name: "X-Custom", value: "kept")]
        let request = AF.request(Self.redirectTo(server, otherOrigin.url("/anything"), status: status), headers: headers)
        let response = await request.serializingDecodable(HTTPBinResponse.self).response
        try await otherOrigin.shutdown()

        #expect(response.error == nil)
        #expect(response.response?.url?.absoluteString == otherOrigin.url("/anything"))
        #expect(otherOrigin.hits(for: "/anything") == 1)
        #expect(response.value?.header("Authorization") == nil)
        #expect(response.value?.header("Cookie") == nil)
        #expect(response.value?.header("Proxy-Authorization") == nil)
        #expect(response.value?.header("X-Custom") == "kept")
        #expect(request.firstRequest?.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(request.performedRequests.last?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    // MARK: Rules (no https server exists here, so these run on the pure decision)

    private static func request(_ url: String, method: String = "GET") -> URLRequest {
        var request = URLRequest(url: URL(string: url) ?? URL(fileURLWithPath: "/"))
        request.httpMethod = method
        return request
    }

    @Test func httpsToHTTPRedirectIsRefused() {
        let decision = RedirectRules.decision(for: Self.request("https://example.com/a"), statusCode: 302,
                                              location: "http://example.com/b", redirectsSoFar: 0)
        #expect(decision == .refuse(.appTransportSecurityRequiresSecureConnection))
    }

    @Test func httpToHTTPSRedirectIsFollowed() {
        let decision = RedirectRules.decision(for: Self.request("http://example.com/a"), statusCode: 301,
                                              location: "https://example.com/b", redirectsSoFar: 0)
        guard case let .follow(next) = decision else {
            Issue.record("expected .follow, got \(decision)")
            return
        }
        #expect(next.url?.absoluteString == "https://example.com/b")
    }

    @Test func seventeenthRedirectIsRefusedAsTooMany() {
        let request = Self.request("http://example.com/a")
        let last = RedirectRules.decision(for: request, statusCode: 302, location: "/b", redirectsSoFar: 15)
        let beyond = RedirectRules.decision(for: request, statusCode: 302, location: "/b", redirectsSoFar: 16)
        #expect(last == .follow(Self.request("http://example.com/b")))
        #expect(beyond == .refuse(.httpTooManyRedirects))
    }

    @Test func relativeLocationResolvesAgainstCurrentURL() {
        let decision = RedirectRules.decision(for: Self.request("http://example.com:8080/a/b?q=1"), statusCode: 307,
                                              location: "c?d=2", redirectsSoFar: 0)
        #expect(decision == .follow(Self.request("http://example.com:8080/a/c?d=2")))
    }

    @Test func headRedirectedWith303StaysHEAD() {
        let decision = RedirectRules.decision(for: Self.request("http://example.com/a", method: "HEAD"), statusCode: 303,
                                              location: "/b", redirectsSoFar: 0)
        #expect(decision == .follow(Self.request("http://example.com/b", method: "HEAD")))
    }

    @Test(arguments: [300, 304, 305, 200])
    func statusesThatAreNotFollowedRedirectsAreFinal(status: Int) {
        let decision = RedirectRules.decision(for: Self.request("http://example.com/a"), statusCode: status,
                                              location: "/b", redirectsSoFar: 0)
        #expect(decision == .notARedirect)
    }

    @Test func streamBodyThatMustBeResentIsRefusedAsExhausted() {
        var request = Self.request("http://example.com/a", method: "PUT")
        request.httpBodyStream = InputStream(data: Data("x".utf8))
        let kept = RedirectRules.decision(for: request, statusCode: 302, location: "/b", redirectsSoFar: 0)
        let dropped = RedirectRules.decision(for: request, statusCode: 303, location: "/b", redirectsSoFar: 0)
        #expect(kept == .refuse(.requestBodyStreamExhausted))
        guard case let .follow(next) = dropped else {
            Issue.record("expected .follow, got \(dropped)")
            return
        }
        #expect(next.httpMethod == "GET")
        #expect(next.httpBodyStream == nil)
    }

    @Test func redirectWithoutLocationIsTheFinalResponse() {
        let missing = RedirectRules.decision(for: Self.request("http://example.com/a"), statusCode: 302,
                                             location: nil, redirectsSoFar: 0)
        let empty = RedirectRules.decision(for: Self.request("http://example.com/a"), statusCode: 302,
                                           location: "", redirectsSoFar: 0)
        #expect(missing == .notARedirect)
        #expect(empty == .notARedirect)
    }

    @Test func locationWithNonHTTPSchemeIsNotFollowed() {
        let decision = RedirectRules.decision(for: Self.request("http://example.com/a"), statusCode: 302,
                                              location: "ftp://example.com/b", redirectsSoFar: 0)
        #expect(decision == .notARedirect)
    }

    @Test func defaultPortIsTheSameOriginAsNoPort() throws {
        let implicit = try #require(URL(string: "http://example.com/a"))
        let explicit = try #require(URL(string: "HTTP://EXAMPLE.com:80/b"))
        let otherPort = try #require(URL(string: "http://example.com:8080/b"))
        let otherScheme = try #require(URL(string: "https://example.com/b"))
        #expect(RedirectRules.sameOrigin(implicit, explicit))
        #expect(!RedirectRules.sameOrigin(implicit, otherPort))
        #expect(!RedirectRules.sameOrigin(implicit, otherScheme))
    }
}
