import Foundation
@testable import Lupine
import LupineTestServer
import Testing

/// Digest challenges (RFC 7616) answered like Basic ones: once per attempt, never pre-emptively.
@Suite struct DigestAuthenticationTests {
    struct Authenticated: Decodable, Sendable { let authenticated: Bool; let user: String }

    /// The example of RFC 7616 section 3.9.1.
    @Test(arguments: [("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
                      ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")])
    func answerMatchesTheRFCExample(algorithm: String, expected: String) throws {
        let field = "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=\(algorithm), "
            + "nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""
        let challenge = try #require(AuthenticationChallenge(field: field))
        let answer = try #require(DigestAnswer(challenge: challenge))
        var request = URLRequest(url: try #require(URL(string: "http://www.example.org/dir/index.html")))
        request.httpMethod = "GET"
        let header = answer.authorization(user: "Mufasa", password: "Circle of Life", for: request,
                                          clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
        #expect(header.contains("response=\"\(expected)\""))
        #expect(header.contains("qop=auth, nc=00000001"))
        #expect(header.contains("opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""))
    }

    @Test(arguments: ["/digest-auth/auth/erin/pw", "/digest-auth/none/erin/pw", "/digest-auth/auth/erin/pw/SHA-256"])
    func digestChallengeIsAnsweredOverTheWire(path: String) async throws {
        let server = try await testServer()
        let request = AF.request(server.url(path + "?x=\(UUID().uuidString)")).authenticate(username: "erin", password: "pw")
        let value = try await request.validate().serializingDecodable(Authenticated.self).value
        #expect(value.user == "erin")
    }

    @Test func wrongDigestPasswordDeliversThe401AfterOneAnswer() async throws {
        let server = try await testServer()
        let path = "/digest-auth/auth/frank/right"
        let response = await AF.request(server.url(path)).authenticate(username: "frank", password: "wrong")
            .validate().serializingData().response
        #expect(response.error?.responseCode == 401)
    }

    @Test func digestIsPreferredWhenBothSchemesAreOffered() throws {
        let fields = [HTTPHeader(name: "WWW-Authenticate", value: "Basic realm=\"r\""),
                      HTTPHeader(name: "WWW-Authenticate", value: "Digest realm=\"r\", nonce=\"n\", qop=\"auth\"")]
        #expect(AuthenticationChallenge.answerable(in: fields)?.scheme == "digest")
        let onlyAuthInt = [HTTPHeader(name: "WWW-Authenticate", value: "Digest realm=\"r\", nonce=\"n\", qop=\"auth-int\""),
                           HTTPHeader(name: "WWW-Authenticate", value: "Basic realm=\"r\"")]
        #expect(AuthenticationChallenge.answerable(in: onlyAuthInt)?.scheme == "basic")
    }
}
